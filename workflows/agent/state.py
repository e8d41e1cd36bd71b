"""The state of a run that hosts the agent loop: supervised, and holding worker-bound tools.

A session and a graph task's run extend `AgentRunState`; a graph runs no tools itself and
extends `supervision.state.SupervisedState` alone.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contracts import ElicitationAnswer

from ..supervision.state import SupervisedState


class AgentRunState(SupervisedState):
    """A supervised state, plus where its worker-bound tools keep their state."""

    worker_queues: dict[str, str] = Field(default_factory=dict)
    """Per worker-bound tool (the terminal), the task queue of the worker holding its state."""
    elicitations: dict[str, ElicitationAnswer] = Field(default_factory=dict)
    """Answers to MCP servers' elicitations, by id, for the running tool to read (the newest kept)."""
    tool_states: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per worker-bound tool, the metadata of its last result: where it left its state (the
    terminal's `cwd`, a program `waiting_for_input`), for the next call's assessment."""
