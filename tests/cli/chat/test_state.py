"""What the REPL reads of its session's stream: a graph task's change settles the gate it waited at."""

from __future__ import annotations

from typing import Any

import pytest

from cli.chat.state import ChatState, Request

GRAPH = "graph:g1"


def state_with(*requests: Request) -> ChatState:
    state = ChatState(key="chat-1", agent="Agent:demo", profile="default", project="/p", principal="alice")
    state.pending = {r.interaction_id: r for r in requests}
    return state


def gate(interaction_id: str, task_uuid: str, **content: Any) -> Request:
    return Request(interaction_id, "confirmation", GRAPH, {"task_id": "t", "task_uuid": task_uuid, **content})


@pytest.mark.parametrize(
    ("status", "reason", "approved", "by"),
    [
        ("ready", "confirmed by bob", True, "bob"),
        ("skipped", "its gate was denied by carol", False, "carol"),
        ("failed", "its gate was timed out", False, "system:timeout"),
        ("cancelled", "the graph was cancelled", False, "the graph (cancelled)"),
    ],
)
def test_a_task_leaving_its_gate_settles_it(status: str, reason: str, approved: bool, by: str) -> None:
    state = state_with(gate("gate_1", "u1"), gate("gate_2", "u2"))
    settled = state.gate_settled({"task_uuid": "u2", "status": status, "reason": reason, "graph": GRAPH})
    assert settled is not None
    assert (settled.request.interaction_id, settled.approved, settled.by) == ("gate_2", approved, by)


def test_other_changes_settle_nothing() -> None:
    state = state_with(gate("gate_1", "u1"), gate("gate_3", "u3", instance=2))
    assert state.gate_settled({"task_uuid": "u1", "status": "waiting"}) is None
    assert state.gate_settled({"task_uuid": "u9", "status": "ready"}) is None
    assert state.gate_settled({"task_uuid": "u1", "status": "ready", "graph": "graph:other"}) is None
    assert state.gate_settled({"task_uuid": "u3", "instance": 1, "status": "ready"}) is None
    loop = state.gate_settled({"task_uuid": "u3", "instance": 2, "status": "ready", "reason": None})
    assert loop is not None and loop.request.interaction_id == "gate_3"
    tool = Request("tool_1", "tool_approval", GRAPH, {"tool_name": "sql", "task_uuid": "u1"})
    assert state_with(tool).gate_settled({"task_uuid": "u1", "status": "ready"}) is None


def test_a_gate_reads_as_its_prompt() -> None:
    assert gate("gate_1", "u1", summary="gate of task t", prompt="Run t?").line() == "gate of task t: Run t?"
