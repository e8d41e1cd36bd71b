"""Tools: how they are described, assessed and run (`ToolDescriptor`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .agent import AgentResult, ToolCallRequest
from .artifacts import ArtifactRef
from .base import CompactContract, Contract
from .principals import PersonId
from .rules import RuleContext, RuleVerdict
from .sandbox import SandboxProfile

ApprovalPolicy = Literal["never", "always", "destructive"]


class ToolDescriptor(Contract):
    """A tool as declared to models and to the approval policy."""

    name: str = Field(description="Unique tool name, used as `ToolCallRequest.tool_id`.")
    description: str = Field(description="What the tool does, for the model.")
    arguments_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object"},
        description="JSON Schema of the arguments.",
    )
    permissions: list[str] = Field(
        default_factory=list, description="What it may do, e.g. read, write, execute."
    )
    source: Literal["builtin", "mcp"] = Field(default="builtin", description="Where it comes from.")
    capabilities: list[str] = Field(
        default_factory=list,
        description="Extras: `streamable`; `quick` (finishes in well under a second: run as a local activity).",
    )
    approval: ApprovalPolicy = Field(
        default="always",
        description="When a call needs a person's approval: never, always, or only when "
        "the call is destructive.",
    )
    critical: bool = Field(
        default=False,
        description="Calls that need approval need two distinct approvers (the two-person rule).",
    )
    allow_grants: bool = Field(
        default=True,
        description="Whether an approval of a call may grant later matching calls "
        "(`response_data.grant`); false: every call is asked for.",
    )


class WorkerBinding(Contract):
    """A tool that keeps state in the worker that ran it (a terminal's shell)."""

    heartbeat_seconds: float = Field(
        gt=0, description="A run silent this long (no heartbeat) has lost its worker."
    )
    wait_seconds: float = Field(
        gt=0,
        description="How long a later run waits for that worker to take it (schedule-to-start); "
        "after that the worker is gone and the state with it.",
    )


class CallContext(Contract):
    """Where a tool call runs, as people judging it need to know (on approval requests, cards and
    the stream); every field None when its tool says nothing."""

    cwd: str | None = Field(default=None, description="The folder it runs in (a terminal command).")
    sandbox: str | None = Field(
        default=None,
        description="What it may reach: a sandbox profile (`workspace-write`), `trusted-read-only` for a "
        "command that runs without approval, or `none`.",
    )
    sandbox_note: str | None = Field(
        default=None, description="Why it runs in that sandbox and no narrower one, when there is a why."
    )
    sandbox_unavailable: str | None = Field(
        default=None, description="Why the tool's sandbox cannot run on this worker (only `full` can)."
    )


class ToolAssessment(CompactContract):
    """Whether a proposed tool call needs approval, and how to show it to people."""

    tool_id: str = Field(description="The tool assessed.")
    known: bool = Field(description="False when no such tool is configured.")
    needs_approval: bool = Field(description="True when a person must approve the call.")
    reason: str = Field(description="Why (or why not), e.g. `DELETE statement`.")
    summary: str = Field(description="Short one-line form of the call, e.g. `sql: DELETE FROM ...`.")
    description: str = Field(default="", description="The tool's description.")
    quick: bool = Field(
        default=False,
        description="The tool declares the `quick` capability (finishes in well under a second), so the "
        "workflow runs it as a local activity.",
    )
    head: str | None = Field(
        default=None,
        description="The call's command head, for `session_prefix` grants: `sql` the statement kind "
        "and table (`DELETE orders`); None when the tool has none.",
    )
    grants: list[str] = Field(
        default_factory=list,
        description="The grant scopes an approval of this call may give (`session`, `session_prefix`).",
    )
    critical: bool = Field(
        default=False, description="The tool is marked critical: two approvers are needed."
    )
    context: CallContext = Field(
        default_factory=CallContext, description="Where it runs, shown with it to the people judging it."
    )
    worker_bound: WorkerBinding | None = Field(
        default=None,
        description="Set for a tool that keeps state in its worker: later runs of the same session "
        "go to the task queue of the worker that ran the first (`worker_queue` in the result's metadata).",
    )
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="The sandbox an approved run uses unless the session, its agent or the approver "
        "chooses another; None: the tool cannot run this call in a sandbox.",
    )
    rule: RuleVerdict | None = Field(
        default=None,
        description="The approval rule that decides the call, if one covers it (`needs_approval` is "
        "then true unless the tool runs it freely and the rule allows it).",
    )


class AssessRequest(Contract):
    """Input of the `assess_tool_call` activity: the call, and what the workflow knows of its tool's state."""

    call: ToolCallRequest = Field(description="The agent's proposed call.")
    state: dict[str, Any] = Field(
        default_factory=dict,
        description="For a tool that keeps state in its worker: the metadata of its last result in "
        "this session while that worker still holds it (the terminal: `cwd`, the folder it is really "
        "in); empty otherwise.",
    )
    rules: RuleContext | None = Field(
        default=None,
        description="Where the session runs and for whom, for approval rules (None: a workflow from "
        "before rules; only global rules apply).",
    )


class ToolRun(Contract):
    """Input of the `run_tool` activity."""

    owner_id: str = Field(description="Workflow id of the session or task running the tool.")
    interaction_id: str | None = Field(
        default=None, description="Approval this run was authorised by; makes the run idempotent."
    )
    call: ToolCallRequest = Field(description="The call to run.")
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="The sandbox an approved run uses (the approver's, session's or agent's choice); "
        "None: the worker's default. A run without approval ignores it: it has a stricter sandbox.",
    )


class ToolResult(Contract):
    """What a tool run produced."""

    tool_id: str = Field(description="The tool that ran.")
    ok: bool = Field(description="False when the tool failed or refused.")
    content: Any = Field(default=None, description="The result (rows, output, ...).")
    error: str | None = Field(default=None, description="What went wrong, when not ok.")
    said: str | None = Field(
        default=None,
        description="What a successful result amounts to, on one line, in its tool's words (`DELETE "
        "done: 3 rows affected.`, `exit status 0`); None when its tool says nothing.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Extras, e.g. truncation.")
    artifact: ArtifactRef | None = Field(
        default=None,
        description="Set when the result was too large to carry: `content` is then a preview and "
        "the whole result is this artifact (`GET /artifacts/{id}`).",
    )


class ToolOutput(Contract):
    """Output of a running tool, sent to its session or task while it runs (in a `tool_outputs` batch)."""

    interaction_id: str | None = Field(default=None, description="The approval the run belongs to.")
    tool_id: str = Field(description="The tool running.")
    text: str = Field(description="New output since the last one (escape sequences removed).")
    chunk_type: Literal["thinking", "tool_use", "content", "pending", "complete", "error"] = Field(
        default="content",
        description="Seed 004's chunk type: the stream chunk's type (`complete` is the command's end, "
        "not the turn's: it is not final).",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Seed 004's metadata of that type (`terminal_type`, `raw_length`, `execution_time`, ...).",
    )


class ToolOutputBatch(Contract):
    """Output of a running tool gathered over a moment (`tool_outputs` signal: one signal per batch)."""

    outputs: list[ToolOutput] = Field(description="The chunks in the order they were produced.")


class ToolDenial(Contract):
    """A tool call that did not run, as the agent is told instead of a result (a tool message's
    content): denied by a person, timed out, cancelled, or a question nobody answered."""

    denied: Literal[True] = Field(
        default=True, description="Always true: tells a denial from a `ToolResult`."
    )
    decided_by: PersonId = Field(
        description="Who denied it (`system:timeout`, `system:cancel` for no person)."
    )
    message: str | None = Field(default=None, description="The person's words, when they gave any.")
    reason: str = Field(description="Why it did not run, in a sentence.")
    cancelled: bool | None = Field(default=None, description="True when its turn was cancelled.")
    edited: dict[str, Any] | None = Field(
        default=None, description="`{edited_by, original_arguments}` when an approver had edited the call."
    )

    def content(self) -> dict[str, Any]:
        """The tool message's content (fields left unset are left out, `message` always shown)."""
        return {"message": None, **self.model_dump(mode="json", exclude_none=True)}

    @classmethod
    def of(cls, content: Any) -> ToolDenial | None:
        """The denial a tool message's content holds, or None (a result, or anything else)."""
        if not isinstance(content, dict) or content.get("denied") is not True:
            return None
        known = {
            key: value for key, value in content.items() if key in cls.model_fields and value is not None
        }
        text = {key: str(known.get(key, "")) for key in ("decided_by", "reason")}
        message = known.get("message")
        edited = known.get("edited")
        return cls(
            **text,
            message=str(message) if message is not None else None,
            cancelled=known.get("cancelled") is True or None,
            edited=edited if isinstance(edited, dict) else None,
        )


# `AgentResult` (its `assessment`) names `ToolAssessment`, which needs `ToolCallRequest` first.
AgentResult.model_rebuild()
