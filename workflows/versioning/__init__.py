"""Which code path a workflow run follows: every change to what workflows do after 1.0 is asked
through `patched` here, decided when the run starts, never through the SDK's `workflow.patched`
at the call site (see `changes` for why)."""

from .changes import AT_START, GENERATION, NewerGeneration, begin, changes_of, patched

__all__ = ["AT_START", "GENERATION", "NewerGeneration", "begin", "changes_of", "patched"]
