"""Which code path a workflow run follows: every change to what workflows do goes through
`patched()` here, never `workflow.patched()` at the call site (see `changes` for why)."""

from .changes import AT_START, BASELINE, BEFORE_BASELINE, GENERATION, NewerGeneration, begin, patched

__all__ = ["AT_START", "BASELINE", "BEFORE_BASELINE", "GENERATION", "NewerGeneration", "begin", "patched"]
