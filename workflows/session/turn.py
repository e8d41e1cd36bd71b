"""Cancelling a session's turn, not the session (seed 000's `send_cancellation`).

The turn's agent loop runs as its own task; cancelling it
withdraws what waits for a person (denied by `system:cancel`), cancels a running agent step or
tool run, gives every call the agent made without a result a "cancelled by the user" result and
notes the cancellation in the conversation, so the agent sees it on the next turn. The session
goes on with its next message. Audited (`turn_cancelled`), published as a final `cancelled` chunk.

Determinism: state and signals decide everything; no I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AuditKind,
        ErrorType,
        Principal,
        SessionControl,
        SessionStatus,
        ToolDenial,
        TurnCancelled,
        UniversalMessage,
    )

    from .state import SessionState

from ..agent.host import LoopOutcome
from ..supervision.audit import audit
from ..supervision.ports import Surface
from ..supervision.supervisor import Supervisor


class Turn:
    """The running turn of a session, which a person may cancel."""

    def __init__(self, name: str, state: SessionState, supervisor: Supervisor, surface: Surface) -> None:
        """Bind to the session's state, supervision and surface (stream, chat, status)."""
        self._name = name
        self._surface = surface
        self._state = state
        self._supervisor = supervisor
        self._task: asyncio.Task[LoopOutcome] | None = None
        self._cancelled_by: SessionControl | None = None

    @property
    def running(self) -> bool:
        """Whether a turn's agent loop is running now."""
        return self._task is not None and not self._task.done()

    async def run(self, loop: Coroutine[Any, Any, LoopOutcome]) -> LoopOutcome:
        """Run the turn's loop; `cancelled` when a person cancelled the turn."""
        self._task = asyncio.create_task(loop)
        try:
            return await self._task
        except asyncio.CancelledError:
            control = self._cancelled_by
            if control is None:
                raise  # the workflow itself is being cancelled
            self._conclude(control)
            return LoopOutcome("cancelled")
        finally:
            self._task, self._cancelled_by = None, None

    def check(self) -> None:
        """Validator: `NoTurnRunning` (409) when there is nothing to cancel."""
        if not self.running or self._cancelled_by is not None:
            raise ApplicationError(
                f"no turn is running in {self._name}; nothing to cancel",
                type=ErrorType.NO_TURN_RUNNING,
                non_retryable=True,
            )

    def cancel(self, control: SessionControl) -> None:
        """Cancel the running turn (validated by `check`; a signal with nothing to cancel is ignored)."""
        if not self.running or self._cancelled_by is not None or self._task is None:
            return
        who = control.principal or Principal.ANONYMOUS
        self._cancelled_by = control
        audit(self._state.audit, AuditKind.TURN_CANCELLED, who, channel="http", comment=control.reason)
        for request in list(self._state.pending):
            self._supervisor.requests.withdraw(
                request.interaction_id, Principal.CANCEL, f"the turn was cancelled by {who}"
            )
        self._task.cancel()

    def _conclude(self, control: SessionControl) -> None:
        """Answer the agent's open calls, note the cancellation, tell the stream and the chat."""
        who = control.principal or Principal.ANONYMOUS
        reason = f"{who} cancelled this request" + (f": {control.reason}" if control.reason else "")
        messages = self._state.messages
        for call_id, tool_id in _unanswered_calls(messages):
            messages.append(
                UniversalMessage(
                    role="tool",
                    name=tool_id,
                    tool_call_id=call_id,
                    content=ToolDenial(decided_by=who, reason=reason, cancelled=True).content(),
                    timestamp=workflow.now(),
                )
            )
        messages.append(UniversalMessage(role="system", content=f"[{reason}]", timestamp=workflow.now()))
        cancelled = TurnCancelled(by=who, reason=control.reason)
        self._surface.publish(cancelled)
        self._surface.channel.tell(cancelled)
        self._state.last_activity = workflow.now()
        self._surface.show_status(SessionStatus.PAUSED if self._state.paused else SessionStatus.ACTIVE)


def _unanswered_calls(messages: list[UniversalMessage]) -> list[tuple[str | None, str]]:
    """The (call id, tool) of the last assistant message's calls that have no tool result yet."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "assistant":
            continue
        content = message.content if isinstance(message.content, dict) else {}
        calls = content.get("tool_calls") or ([content["tool_call"]] if "tool_call" in content else [])
        answered = sum(m.role == "tool" for m in messages[index + 1 :])  # the loop answers calls in order
        return [
            (call.get("call_id"), str(call.get("tool_id")))
            for call in calls[answered:]
            if isinstance(call, dict)
        ]
    return []
