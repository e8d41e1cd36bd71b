"""The Synapse path as a user drives it: HTTP to the API; waits read the workflow's queries.

Waiting for "pending" and "answered" polls the session's queries through the Temporal client
(queries add no history events, unlike an SSE subscription whose long-polls are updates).
"""

from __future__ import annotations

from typing import Any

from contracts import InteractionRequest, LiveSession
from workflows.session import SessionWorkflow

from .harness import Stack
from .stats import poll

WAIT_WITHIN = 60.0
"""Seconds a session may take to reach a state before the benchmark fails."""


async def send(stack: Stack, key: str, content: str) -> None:
    """`POST /sessions/{key}/messages` (signal-with-start); fails on anything but 202."""
    response = await stack.http.post(
        f"/sessions/{key}/messages", json={"content": content, "principal": "bench"}
    )
    if response.status_code != 202:
        raise RuntimeError(f"POST /sessions/{key}/messages answered {response.status_code}: {response.text}")


async def wait_pending(stack: Stack, key: str, *, interval: float) -> str:
    """Poll `get_pending` until an interaction waits; its id."""
    handle = stack.session(key)

    async def pending() -> list[InteractionRequest]:
        result: list[InteractionRequest] = await handle.query(SessionWorkflow.get_pending)
        return result

    found = await poll(pending, bool, interval=interval, within=WAIT_WITHIN, what=f"session {key} pending")
    return found[0].interaction_id


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


async def approve(stack: Stack, key: str, interaction_id: str) -> dict[str, Any]:
    """`POST /sessions/{key}/interactions/{id}` approving; the outcome, checked to carry an applied result."""
    response = await stack.http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bench"}
    )
    if response.status_code != 200:
        raise RuntimeError(
            f"approving {key}/{interaction_id} answered {response.status_code}: {response.text}"
        )
    outcome: dict[str, Any] = response.json()
    result = outcome.get("tool_result") or {}
    if not result.get("ok") or (result.get("content") or {}).get("rowcount") != 1:
        raise RuntimeError(f"approving {key}/{interaction_id}: the statement was not applied: {outcome}")
    return outcome
