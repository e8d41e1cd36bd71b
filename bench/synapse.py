"""The Synapse path as a user drives it: HTTP to the API (`plain.py`); waits read the workflow's
queries or its history.

`wait_pending` and `wait_answered` poll the session's queries through the Temporal client. A query
adds no history event when it finds the session between workflow tasks, but one that lands while
local activities hold a task open costs one more workflow task (3 events). `seen_pending` and
`seen_over` wait on the server's long-poll on history instead: the reader adds nothing to the turn.
"""

from __future__ import annotations

from contracts import InteractionOutcome, InteractionRequest, LiveSession
from workflows.session import SessionWorkflow

from .harness import Stack
from .history import sets_status, wait_event, waits_idle
from .stats import poll

WAIT_WITHIN = 60.0
"""Seconds a session may take to reach a state before the benchmark fails."""


async def send(stack: Stack, key: str, content: str) -> None:
    """`POST /sessions/{key}/messages` (signal-with-start); fails on anything but 202."""
    await stack.plain.post(
        f"/sessions/{key}/messages", {"content": content, "principal": "bench"}, expect=202
    )


async def wait_pending(stack: Stack, key: str, *, interval: float) -> str:
    """Poll `get_pending` until an interaction waits; its id."""
    handle = stack.session(key)

    async def pending() -> list[InteractionRequest]:
        result: list[InteractionRequest] = await handle.query(SessionWorkflow.get_pending)
        return result

    found = await poll(pending, bool, interval=interval, within=WAIT_WITHIN, what=f"session {key} pending")
    return found[0].interaction_id


async def seen_waiting(stack: Stack, key: str) -> None:
    """Wait on history for the session's status to become `waiting_approval`."""
    await wait_event(
        stack.session(key), sets_status("waiting_approval"), within=WAIT_WITHIN, what=f"session {key} pending"
    )


async def seen_pending(stack: Stack, key: str) -> str:
    """`seen_waiting`, then the waiting interaction's id (one query, the workflow task done)."""
    await seen_waiting(stack, key)
    pending: list[InteractionRequest] = await stack.session(key).query(SessionWorkflow.get_pending)
    return pending[0].interaction_id


async def seen_over(stack: Stack, key: str) -> None:
    """Wait on history for the turn to be over: the agent answered and the session waits idle."""
    await wait_event(stack.session(key), waits_idle, within=WAIT_WITHIN, what=f"session {key} idle")


def _answered(status: LiveSession) -> bool:
    """The turn is over: nothing pending and the last message is the agent's answer."""
    if status.pending_interactions or not status.messages:
        return False
    last = status.messages[-1]
    return last.role == "assistant" and not (isinstance(last.content, dict) and "tool_call" in last.content)


async def wait_answered(stack: Stack, key: str, *, interval: float) -> None:
    """Poll `get_status` until the agent's answer is in the conversation."""
    handle = stack.session(key)

    async def status() -> LiveSession:
        result: LiveSession = await handle.query(SessionWorkflow.get_status)
        return result

    await poll(status, _answered, interval=interval, within=WAIT_WITHIN, what=f"session {key} answered")


async def approve(stack: Stack, key: str, interaction_id: str) -> InteractionOutcome:
    """Approve over HTTP; the outcome, checked to carry an applied result."""
    path = f"/sessions/{key}/interactions/{interaction_id}"
    body = await stack.plain.post(path, {"approved": True, "principal": "bench"}, expect=200)
    outcome = InteractionOutcome.model_validate_json(body)
    result = outcome.tool_result
    if result is None or not result.ok or (result.content or {}).get("rowcount") != 1:
        raise RuntimeError(f"approving {key}/{interaction_id}: the statement was not applied: {outcome}")
    return outcome
