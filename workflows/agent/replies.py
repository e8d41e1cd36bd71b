"""What goes back to the agent: a tool's result or denial as a tool message, and the error of
an activity that failed (a workflow's cancellation ends the loop instead)."""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        InteractionOutcome,
        Principal,
        ToolCallRequest,
        ToolDenial,
        ToolResult,
        UniversalMessage,
    )

from ..supervision.rules import RULE_CHANNEL


def raise_if_cancelled(err: ActivityError) -> None:
    """A workflow being cancelled cancels its activities: the loop ends cancelled, not failed."""
    if isinstance(err.cause, CancelledError):
        raise asyncio.CancelledError() from err


def error_message(err: BaseException) -> str:
    cause = err.cause if isinstance(err, ActivityError) else None
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or err)


def result_told(result: ToolResult) -> dict[str, Any]:
    """A tool's result as the agent is told it: the fields it has (None ones left out; what the
    tool returned inside `content` stays whole)."""
    return result.model_dump(mode="json", exclude_none=True)


def tool_message(
    call: ToolCallRequest, content: dict[str, Any], interaction_id: str | None
) -> UniversalMessage:
    """A tool result for the agent: `tool_call_id` is the model's call id when it gave one."""
    return UniversalMessage(
        role="tool",
        name=call.tool_id,
        tool_call_id=call.call_id or interaction_id,
        content=content,
        timestamp=workflow.now(),
        metadata={"interaction_id": interaction_id} if call.call_id else {},
    )


UNANSWERED_BY: dict[str, str] = {
    Principal.TIMEOUT: "nobody answered the question in time",
    Principal.CANCEL: "the session was cancelled",
}

DENIED_BY: dict[str, str] = {
    Principal.TIMEOUT: "the approval request timed out",
    Principal.CANCEL: "the session was cancelled",
}


def denial(outcome: InteractionOutcome, *, question: bool = False) -> ToolDenial:
    """What the agent is told of a call a person denied (or of a question nobody answered)."""
    if question:
        reason = UNANSWERED_BY.get(outcome.decided_by, "the person declined to answer")
    elif outcome.channel == RULE_CHANNEL:
        reason = "an approval rule refuses it"
    else:
        reason = DENIED_BY.get(outcome.decided_by, "a person denied it")
    return ToolDenial(decided_by=outcome.decided_by, message=outcome.comment, reason=reason)
