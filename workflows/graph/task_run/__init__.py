"""A graph task's run: `AgentTaskWorkflow` (`workflow`), its state (`state`), what it reports
(`report`), and its timeout counted in seconds of work (`budget`)."""

from .workflow import AgentTaskWorkflow

__all__ = ["AgentTaskWorkflow"]
