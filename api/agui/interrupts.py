"""What waits for a person, as AG-UI interrupts; and an AG-UI `resume` entry, as the decision it makes.

An interrupt is one pending request: its id is the interaction id (a tool approval's `toolCallId`
too), `reason` the ask's kind (`tool_approval`, `question`, `gate`), `message` the request's
sentence (`core.wording`, as every channel says it) and `responseSchema` the JSON Schema of the
answer a `resolved` entry's `payload` must match. `editedArgs` is the key AG-UI names for an
approval with edits (`HumanInTheLoopCapabilities.approveWithEdits`).

A `cancelled` entry is a denial (a question: declined) whose reason is its `metadata.reason`
(the client drops a cancelled entry's payload), or a raw caller's `payload.comment`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ag_ui.core import Interrupt, ResumeEntry

from contracts import (
    GateOpened,
    InteractionDecision,
    InteractionRequest,
    QuestionAsked,
    RequestOpened,
    ToolApprovalAsk,
)
from core.wording import line_of

from ..calls.errors import Problem

CANCELLED_REASON = "cancelled in the AG-UI client"
"""A cancelled entry's reason when it gives none."""

_ASKING: dict[str, type[RequestOpened | QuestionAsked | GateOpened]] = {
    "tool_approval": RequestOpened,
    "question": QuestionAsked,
    "gate": GateOpened,
}


def response_schema(request: InteractionRequest) -> dict[str, Any]:
    """The JSON Schema of a `resolved` entry's payload for `request`."""
    ask = request.ask
    if ask.kind == "question":
        properties: dict[str, Any] = {"answer": {"type": "string", "minLength": 1}}
        required = ["answer"]
    else:
        properties = {"approved": {"type": "boolean"}, "comment": {"type": "string"}}
        required = ["approved"]
    if isinstance(ask, ToolApprovalAsk):
        properties["editedArgs"] = {"type": "object", "description": "Run the call with these arguments."}
        if ask.grants:
            properties["grant"] = {"enum": [str(g) for g in ask.grants]}
        if ask.sandboxes:
            properties["sandbox"] = {"enum": [str(s) for s in ask.sandboxes]}
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def interrupt_of(request: InteractionRequest) -> Interrupt:
    """The interrupt a pending request is."""
    ask = request.ask
    sentence = line_of(_ASKING[ask.kind](request=request)).text
    synapse: dict[str, Any] = {
        "workflowId": request.workflow_id,
        "approvers": list(request.approvers),
        "approvalsRequired": request.approvals_required,
        "approvedBy": list(request.approved_by),
    }
    if isinstance(ask, ToolApprovalAsk):
        synapse |= {"tool": ask.tool, "arguments": ask.arguments, "summary": ask.summary}
    return Interrupt(
        id=request.interaction_id,
        reason=ask.kind,
        message=sentence,
        tool_call_id=request.interaction_id if ask.kind == "tool_approval" else None,
        response_schema=response_schema(request),
        expires_at=_iso(request.expires_at) if request.expires_at else None,
        metadata={"synapse": synapse},
    )


def _iso(moment: datetime) -> str:
    """ISO-8601 in UTC with `Z`, as `Interrupt.expiresAt` is read (a naive time is UTC already)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat().replace("+00:00", "Z")


class _Reading:
    """One entry's payload, read field by field; each problem is named `resume.<i>.payload.<field>`."""

    def __init__(self, index: int, payload: Any) -> None:
        self.index = index
        self.payload = payload if isinstance(payload, dict) else {}
        self.problems: list[Problem] = []

    def wrong(self, field: str | None, msg: str, kind: str = "value_error") -> None:
        where: tuple[str | int, ...] = ("resume", self.index, "payload")
        self.problems.append(Problem((*where, field) if field else where, msg, kind))

    def only(self, fields: set[str]) -> None:
        unknown = sorted(set(self.payload) - fields)
        if unknown:
            self.wrong(None, f"takes {sorted(fields)}, not {unknown}", "unknown_field")

    def typed(self, field: str, kind: type, what: str, *, required: bool = False) -> Any:
        if field not in self.payload:
            if required:
                self.wrong(field, f"required: {what}", "missing")
            return None
        value = self.payload[field]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.wrong(field, f"must be {what}, got {type(value).__name__}")
            return None
        return value

    def choice(self, field: str, offered: list[str]) -> str | None:
        value = self.payload.get(field)
        if field in self.payload and value not in offered:
            self.wrong(field, f"{value!r} is not offered; expected one of {offered or 'none'}")
            return None
        return value if isinstance(value, str) else None


def decision_body(
    index: int, entry: ResumeEntry, request: InteractionRequest, run_marker: str
) -> InteractionDecision | list[Problem]:
    """The decision entry `index` of a resume makes on `request`, or what is wrong with it.

    `run_marker` goes in the decision's metadata as its `message_id`: the session's `DecisionTaken`
    carries it, so the run's stream starts there (`api.sse.turns.turn_chunks`)."""
    metadata = {"message_id": run_marker}
    reading = _Reading(index, entry.payload)
    if entry.status == "cancelled":
        reason = (entry.metadata or {}).get("reason") or reading.payload.get("comment")
        comment = reason if isinstance(reason, str) and reason.strip() else CANCELLED_REASON
        return InteractionDecision(approved=False, user_message=comment, metadata=metadata)
    ask = request.ask
    if ask.kind == "question" and isinstance(entry.payload, str):
        reading.payload = {"answer": entry.payload}
    elif not isinstance(entry.payload, dict):
        reading.wrong(None, f"must be an object matching the interrupt's responseSchema ({ask.kind})")
        return reading.problems
    if ask.kind == "question":
        if reading.payload.get("approved") is False and set(reading.payload) <= {"approved", "comment"}:
            comment = reading.typed("comment", str, "a string")
            return reading.problems or InteractionDecision(
                approved=False, user_message=comment, metadata=metadata
            )
        reading.only({"answer"})
        answer = reading.typed("answer", str, "a non-empty string", required=True)
        if answer is not None and not answer.strip():
            reading.wrong("answer", "must be a non-empty string (or decline: status cancelled)")
        return reading.problems or InteractionDecision(
            approved=True, response_data={"text": answer}, metadata=metadata
        )
    fields = {"approved", "comment"}
    if isinstance(ask, ToolApprovalAsk):
        fields |= {"editedArgs", "grant", "sandbox"}
    reading.only(fields)
    approved = reading.typed("approved", bool, "true to approve, false to deny", required=True)
    comment = reading.typed("comment", str, "a string")
    data: dict[str, Any] = {}
    if isinstance(ask, ToolApprovalAsk):
        edited = reading.typed("editedArgs", dict, "an object of the tool's arguments")
        grant = reading.choice("grant", [str(g) for g in ask.grants])
        sandbox = reading.choice("sandbox", [str(s) for s in ask.sandboxes])
        data = {
            k: v
            for k, v in {"arguments": edited, "grant": grant, "sandbox": sandbox}.items()
            if v is not None
        }
        if data and approved is False:
            reading.wrong("approved", "editedArgs, grant and sandbox go with approving (approved: true)")
    if reading.problems:
        return reading.problems
    return InteractionDecision(
        approved=approved, response_data=data or None, user_message=comment, metadata=metadata
    )
