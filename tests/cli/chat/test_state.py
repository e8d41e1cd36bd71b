"""What the REPL reads of its session's stream: a graph task's change settles the gate it waited at
(its `reason_code` and `by` say how and by whom: no sentence is parsed)."""

from __future__ import annotations

from typing import Any

import pytest

from cli.chat.state import ChatState, Request
from contracts import GateAsk, TaskChanged, TaskReason, TaskStatus, ToolApprovalAsk

GRAPH = "graph:g1"


def state_with(*requests: Request) -> ChatState:
    state = ChatState(key="chat-1", agent="Agent:demo", profile="default", project="/p", principal="alice")
    state.pending = {r.interaction_id: r for r in requests}
    return state


def gate(interaction_id: str, task_uuid: str, instance: int | None = None, prompt: str = "") -> Request:
    ask = GateAsk(task_id="t", task_uuid=task_uuid, instance=instance, prompt=prompt)
    return Request(interaction_id, GRAPH, ask)


def change(task_uuid: str, status: TaskStatus, **facts: Any) -> TaskChanged:
    return TaskChanged(task_id="t", task_uuid=task_uuid, status=status, **facts)


@pytest.mark.parametrize(
    ("status", "code", "by", "approved", "said_by"),
    [
        (TaskStatus.READY, TaskReason.GATE_CONFIRMED, "bob", True, "bob"),
        (TaskStatus.SKIPPED, TaskReason.GATE_DENIED, "carol", False, "carol"),
        (TaskStatus.FAILED, TaskReason.GATE_TIMED_OUT, "system:timeout", False, "system:timeout"),
        (TaskStatus.CANCELLED, None, None, False, "the graph (cancelled)"),
    ],
)
def test_a_task_leaving_its_gate_settles_it(
    status: TaskStatus, code: TaskReason | None, by: str | None, approved: bool, said_by: str
) -> None:
    state = state_with(gate("gate_1", "u1"), gate("gate_2", "u2"))
    settled = state.gate_settled(change("u2", status, reason_code=code, by=by, graph=GRAPH))
    assert settled is not None
    assert (settled.request.interaction_id, settled.approved, settled.by) == ("gate_2", approved, said_by)


def test_other_changes_settle_nothing() -> None:
    state = state_with(gate("gate_1", "u1"), gate("gate_3", "u3", instance=2))
    assert state.gate_settled(change("u1", TaskStatus.WAITING, reason_code=TaskReason.GATE_WAITING)) is None
    assert state.gate_settled(change("u9", TaskStatus.READY)) is None
    assert state.gate_settled(change("u1", TaskStatus.READY, graph="graph:other")) is None
    assert state.gate_settled(change("u3", TaskStatus.READY, instance=1)) is None
    loop = state.gate_settled(
        change("u3", TaskStatus.READY, instance=2, reason_code=TaskReason.GATE_CONFIRMED)
    )
    assert loop is not None and loop.request.interaction_id == "gate_3"
    tool = Request("tool_1", GRAPH, ToolApprovalAsk(tool="sql"))
    assert state_with(tool).gate_settled(change("u1", TaskStatus.READY)) is None


def test_a_gate_reads_as_its_prompt() -> None:
    assert gate("gate_1", "u1", prompt="Run t?").line() == "gate of task t: Run t?"
    assert gate("gate_2", "u2", 3, prompt="Run t for 3?").line() == "gate of task t #3: Run t for 3?"
