"""The events of a stream, typed: one model per thing a session, a graph or a task run publishes.

A `TaskStreamChunk`'s `content` is one of these (`StreamEvent`, told apart by `event`). Each model
says which `TaskChunkType` it goes out as (`chunk_type`, the SSE `event:` line, so clients that
read chunk types keep working) and whether it ends a turn or a stream (`final`). Field names are
the keys the chunks of the seeds' shape had, where they kept their meaning.

What the events say in words (a decision, a task's progress, a tool's result) is written once,
in `core.wording`; the API sends each event's sentence beside it (`SentChunk.text`).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import Field, GetJsonSchemaHandler, JsonValue
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .agent import FailureDetails
from .base import Contract
from .decisions import Said
from .grants import Grant
from .principals import PersonId
from .statuses import EdgeStatus, GraphStatus, TaskStatus
from .streaming import InteractionRequest, SessionStatus, TaskChunkType
from .tools import CallContext, ToolResult


class EventModel(Contract):
    """What every event has: its name (`event`), and, as class facts, the chunk type it goes out
    as and whether it is a turn's (or a stream's) last."""

    event: str = Field(description="Which event this is (each model's own name).")
    chunk_type: ClassVar[TaskChunkType]
    final: ClassVar[bool] = False
    family: ClassVar[Literal["request", "output"] | None] = None
    """Events drawn alike: a request for a person (a card, a prompt), a running command's output."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The schema names the chunk type, finality and family too (`x-chunk-type`, `x-final`,
        `x-family`): the console's `events.js` is generated from it."""
        schema = handler(core)
        if hasattr(cls, "chunk_type"):
            schema = handler.resolve_ref_schema(schema)
            schema["x-chunk-type"] = cls.chunk_type.value
            schema["x-final"] = cls.final
            if cls.family is not None:
                schema["x-family"] = cls.family
        return schema


# ------------------------------------------------------------------ requests and decisions


class Asking(EventModel):
    """A request for a person, announced: the whole request (who may answer, until when, what)."""

    family = "request"

    request: InteractionRequest = Field(description="The request, as `GET /sessions/{key}` lists it.")
    task_uuid: str | None = Field(
        default=None, description="The graph task whose run asks (on a graph's stream), if any."
    )


class RequestOpened(Asking):
    """A tool call (or, relayed from a graph, a gate) waits for approval."""

    chunk_type = TaskChunkType.TOOL_APPROVAL_REQUEST
    event: Literal["request_opened"] = "request_opened"


class QuestionAsked(Asking):
    """The agent (or a running MCP tool) asks a person a question."""

    chunk_type = TaskChunkType.USER_INPUT_REQUEST
    event: Literal["question_asked"] = "question_asked"


class GateOpened(Asking):
    """A gated graph task (or loop instance) waits for a person's confirmation (a graph's stream)."""

    chunk_type = TaskChunkType.PENDING
    event: Literal["gate_opened"] = "gate_opened"


class DecisionTaken(EventModel):
    """A request was decided: by a person (any door), a rule, a grant, a timeout or a cancel."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["decision_taken"] = "decision_taken"
    interaction_id: str = Field(description="The request decided.")
    approved: bool = Field(description="Approved (a question: answered), or denied (declined).")
    decided_by: PersonId = Field(
        description="Who: a principal, `rule:<id>`, `system:timeout`, `system:cancel`."
    )
    channel: str = Field(description="Where from: http, ag-ui, lark, dingtalk, cli, rule, grant, system, ...")
    comment: str | None = Field(
        default=None, description="The person's words, or why (a rule's, a timeout's)."
    )
    said: Said | None = Field(
        default=None,
        description="What was said, typed: a verdict (with its edit, grant, sandbox) or an answer.",
    )
    grant_id: str | None = Field(
        default=None, description="The grant that allowed the call (channel `grant`)."
    )
    rule_id: str | None = Field(default=None, description="The rule that decided (channel `rule`).")
    workflow_id: str | None = Field(
        default=None, description="The workflow that asked, when it is not this one (a session's graph)."
    )
    message_id: str | None = Field(default=None, description="The message that decided it (a chat reply).")


class ApprovalCounted(EventModel):
    """One approval of a request that needs more (the two-person rule): it still waits."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["approval_counted"] = "approval_counted"
    interaction_id: str = Field(description="The request.")
    approved_by: list[PersonId] = Field(description="Who approved so far, in order.")
    approvals_required: int = Field(description="How many distinct approvals it needs.")
    message_id: str | None = Field(default=None, description="The message that approved (a chat reply).")


class RequestEscalated(EventModel):
    """Nobody decided in time: the request now asks `escalated_to` too."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["request_escalated"] = "request_escalated"
    interaction_id: str = Field(description="The request.")
    escalated_to: list[PersonId] = Field(description="Who is asked now too.")
    approvers: list[PersonId] = Field(description="Who may decide now (empty: anyone).")


class ReplyRefused(EventModel):
    """A chat reply could not decide the request it answered (not an approver, ambiguous, ...)."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["reply_refused"] = "reply_refused"
    interaction_id: str = Field(description="The request the reply answered.")
    reason: str = Field(description="Why it did not count, as the chat was told.")
    message_id: str | None = Field(default=None, description="The reply.")


class GrantMade(EventModel):
    """An approval also allowed later calls like it, for the rest of the session."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["grant_made"] = "grant_made"
    grant: Grant = Field(description="The grant.")
    comment: str = Field(description="What it allows, as the audit says it.")


class GrantRevoked(EventModel):
    """A grant was revoked: later calls are asked for again."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["grant_revoked"] = "grant_revoked"
    grant_id: str = Field(description="The grant.")
    revoked_by: PersonId = Field(description="Who revoked it.")
    channel: str = Field(description="Where from.")


# ------------------------------------------------------------------ turns and the agent


class TurnStarted(EventModel):
    """A message reached the agent: its turn begins."""

    chunk_type = TaskChunkType.PROCESSING
    event: Literal["turn_started"] = "turn_started"
    message: str = Field(description="The message.")
    sender: PersonId = Field(alias="from", description="Who sent it.")
    message_id: str | None = Field(default=None, description="Its id (the API's, or the chat's).")


class Thinking(EventModel):
    """What the agent thought before it acted."""

    chunk_type = TaskChunkType.THINKING
    event: Literal["thinking"] = "thinking"
    text: str = Field(description="The thought.")


class ToolCalled(EventModel):
    """The agent called a tool; `requires_approval` says whether it waits for a person."""

    chunk_type = TaskChunkType.TOOL_CALL_REQUEST
    event: Literal["tool_called"] = "tool_called"
    tool_name: str = Field(description="The tool.")
    tool_params: dict[str, JsonValue] = Field(default_factory=dict, description="Its arguments.")
    summary: str = Field(default="", description="The call on one line.")
    context: CallContext = Field(
        default_factory=CallContext, description="Where it runs (the terminal: `cwd`, `sandbox`)."
    )
    interaction_id: str | None = Field(
        default=None, description="Its run's interaction id (None: not run yet)."
    )
    requires_approval: bool = Field(default=False, description="It waits for a person's approval.")


class ToolRestarted(EventModel):
    """A tool that keeps state in its worker starts afresh: that worker was lost, and the state with it."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["tool_restarted"] = "tool_restarted"
    tool_name: str = Field(description="The tool.")
    interaction_id: str | None = Field(default=None, description="The run.")


class ToolUsed(EventModel):
    """A tool ran: its result."""

    chunk_type = TaskChunkType.TOOL_USE
    event: Literal["tool_used"] = "tool_used"
    tool_name: str = Field(description="The tool.")
    result: ToolResult = Field(description="What it produced (or why it failed).")
    interaction_id: str | None = Field(default=None, description="The run.")


class ToolRefused(EventModel):
    """A tool call did not run: its tool refused it (or the call was malformed)."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["tool_refused"] = "tool_refused"
    tool_name: str = Field(description="The tool.")
    error: str = Field(description="Why.")


class TurnAnswered(EventModel):
    """The agent's answer."""

    chunk_type = TaskChunkType.RESPONSE
    event: Literal["turn_answered"] = "turn_answered"
    answer: JsonValue = Field(description="The answer: text or any JSON value (a preview when offloaded).")


class TurnFailure(StrEnum):
    """Why a turn ended without an answer."""

    AGENT_FAILED = "agent_failed"
    """The agent failed (`failure` says how)."""
    PLAN = "plan"
    """The agent proposed a task graph where none can run."""
    MAX_TURNS = "max_turns"
    """The agent did not answer within `max_turns` steps."""


class TurnFailed(EventModel):
    """The turn ended without an answer."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["turn_failed"] = "turn_failed"
    reason_code: TurnFailure = Field(description="Why.")
    failure: FailureDetails | None = Field(default=None, description="The agent's failure (`agent_failed`).")
    max_turns: int | None = Field(default=None, description="The step limit (`max_turns`).")


class TurnCompleted(EventModel):
    """The turn is over (its answer, or why there is none, came before)."""

    chunk_type = TaskChunkType.COMPLETE
    final = True
    event: Literal["turn_completed"] = "turn_completed"


class TurnCancelled(EventModel):
    """A person cancelled the running turn; the session goes on."""

    chunk_type = TaskChunkType.CANCELLED
    final = True
    event: Literal["turn_cancelled"] = "turn_cancelled"
    by: PersonId = Field(description="Who.")
    reason: str | None = Field(default=None, description="Why, as they said.")


# ------------------------------------------------------------------ a running command's output


class Output(EventModel):
    """A piece of a running tool's output (a terminal command), as it comes (seed 004's chunks)."""

    family = "output"

    text: str = Field(description="The text (escape sequences removed).")
    source_tool: str = Field(description="The tool running.")
    interaction_id: str | None = Field(default=None, description="The run.")
    terminal_type: str | None = Field(default=None, description="`generic`, or `qcli` (an agent CLI).")


class CommandOutput(Output):
    """Text the command printed."""

    chunk_type = TaskChunkType.CONTENT
    event: Literal["command_output"] = "command_output"
    styled: str | None = Field(default=None, description="The same text with its colours (SGR sequences).")
    raw_length: int | None = Field(default=None, description="Bytes of raw output it came from.")
    content_length: int | None = Field(default=None, description="Characters of `text`.")


class CommandThinking(Output):
    """An agent CLI in the terminal shows it is thinking."""

    chunk_type = TaskChunkType.THINKING
    event: Literal["command_thinking"] = "command_thinking"
    raw_length: int | None = Field(default=None, description="Bytes of raw output it came from.")


class CommandToolUse(Output):
    """An agent CLI in the terminal uses one of its tools."""

    chunk_type = TaskChunkType.TOOL_USE
    event: Literal["command_tool_use"] = "command_tool_use"
    tool_name: str | None = Field(default=None, description="The agent CLI's tool.")
    raw_length: int | None = Field(default=None, description="Bytes of raw output it came from.")


class CommandPrompt(Output):
    """The program in the terminal waits for input at its prompt."""

    chunk_type = TaskChunkType.PENDING
    event: Literal["command_prompt"] = "command_prompt"
    prompt_text: str | None = Field(default=None, description="The prompt.")


class CommandEnded(Output):
    """The command ended (the command, not the turn: not final)."""

    chunk_type = TaskChunkType.COMPLETE
    event: Literal["command_ended"] = "command_ended"
    execution_time: float | None = Field(default=None, description="Seconds it ran.")
    command_success: bool | None = Field(default=None, description="Whether it succeeded.")
    exit_status: int | None = Field(default=None, description="Its exit status.")
    sandbox: str | None = Field(default=None, description="The sandbox it ran in.")


class CommandFailed(Output):
    """The command could not finish (interrupted, or its sandbox did not start)."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["command_failed"] = "command_failed"
    error_message: str | None = Field(default=None, description="What went wrong.")
    error_type: str | None = Field(default=None, description="What kind of failure.")


CommandEvent = CommandOutput | CommandThinking | CommandToolUse | CommandPrompt | CommandEnded | CommandFailed
"""A running command's output, one of seed 004's kinds (`Output`)."""


# ------------------------------------------------------------------ sessions


class SessionStatusChanged(EventModel):
    """The session was paused or resumed."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["session_status_changed"] = "session_status_changed"
    status: Literal["paused", "resumed"] = Field(description="What happened.")
    reason: str | None = Field(default=None, description="Why, as the person said.")


class Ended(EventModel):
    """A session's run ended."""

    final = True
    status: SessionStatus = Field(description="How it ended.")
    reason: str = Field(description="Why.")


class SessionEnded(Ended):
    """The session ended (idle for its timeout)."""

    chunk_type = TaskChunkType.COMPLETE
    event: Literal["session_ended"] = "session_ended"


class SessionCancelled(Ended):
    """The session was cancelled."""

    chunk_type = TaskChunkType.CANCELLED
    event: Literal["session_cancelled"] = "session_cancelled"


class DeliveryFailed(EventModel):
    """A chat message or a webhook notification could not be delivered (it was dropped)."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["delivery_failed"] = "delivery_failed"
    via: Literal["chat", "webhook"] = Field(description="A chat delivery or a webhook notification.")
    what: str = Field(description="What: the message's kind, or the notification's event.")
    to: str = Field(description="Where: the chat channel, or the webhook's URL.")
    reason: str = Field(description="Why it failed.")


class GraphStarted(EventModel):
    """The session's agent proposed a plan: it runs as a task graph."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["graph_started"] = "graph_started"
    graph_id: str = Field(description="The graph's id.")
    workflow_id: str = Field(description="Its workflow id.")
    tasks: list[str] = Field(description="Its tasks' blueprint ids.")


# ------------------------------------------------------------------ graphs


class TaskReason(StrEnum):
    """Why a task changed, where a client acts on it (a gate's decision)."""

    GATE_WAITING = "gate_waiting"
    GATE_CONFIRMED = "gate_confirmed"
    GATE_DENIED = "gate_denied"
    GATE_TIMED_OUT = "gate_timed_out"


class TaskChanged(EventModel):
    """A graph task (or one instance of a loop) moved to another status."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["task_changed"] = "task_changed"
    task_id: str = Field(description="The task's blueprint id.")
    task_uuid: str = Field(description="Its engine id.")
    status: TaskStatus = Field(description="Where it is now.")
    version: int | None = Field(default=None, description="Its version (not on a loop instance's change).")
    instance: int | None = Field(default=None, description="The loop instance, when one changed.")
    reason: str | None = Field(default=None, description="Why, in words (also the task's `reason`).")
    reason_code: TaskReason | None = Field(default=None, description="Why, where a client acts on it.")
    by: PersonId | None = Field(default=None, description="Who moved it: the gate's decider.")
    graph: str | None = Field(
        default=None, description="The graph's workflow id, on the stream of the session it runs for."
    )


class EdgeChanged(EventModel):
    """An edge of a graph was resolved (or reset)."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["edge_changed"] = "edge_changed"
    edge: str = Field(description="The edge's id.")
    status: EdgeStatus = Field(description="Where it is now.")
    error: str | None = Field(default=None, description="Why its condition could not be evaluated.")


class TaskPaused(EventModel):
    """A graph task was paused or resumed (an intervention)."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["task_paused"] = "task_paused"
    task_id: str = Field(description="The task's blueprint id.")
    task_uuid: str = Field(description="Its engine id.")
    paused: bool = Field(description="Paused now (False: resumed).")
    by: PersonId = Field(description="Who.")


class TaskRolledBack(EventModel):
    """A graph task is re-run as a new version; every task downstream is reset."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["task_rolled_back"] = "task_rolled_back"
    task_id: str = Field(description="The task's blueprint id.")
    task_uuid: str = Field(description="Its engine id.")
    rolled_back_by: PersonId = Field(description="Who.")
    next_version: int = Field(description="The version it runs as next.")
    reset: list[str] = Field(default_factory=list, description="The tasks downstream that were reset.")


class GraphChanged(EventModel):
    """A graph grew (a blueprint or an agent's plan), or a closed graph was opened again."""

    chunk_type = TaskChunkType.PROGRESS
    event: Literal["graph_changed"] = "graph_changed"
    change: Literal["extended", "reopened"] = Field(description="What happened.")
    by: PersonId = Field(description="Who.")
    reason: str | None = Field(default=None, description="Why (`reopened`).")
    tasks: dict[str, str] = Field(default_factory=dict, description="Tasks added: blueprint id -> engine id.")
    edges: int = Field(default=0, description="How many edges were added.")


class PlanRefused(EventModel):
    """A plan a graph task's agent proposed was refused; the graph goes on without it."""

    chunk_type = TaskChunkType.ERROR
    event: Literal["plan_refused"] = "plan_refused"
    task_id: str = Field(description="The task whose agent proposed it.")
    reason: str = Field(description="Why it was refused.")


class GraphRefused(EventModel):
    """A graph's first blueprint was refused: the graph ended before it began."""

    chunk_type = TaskChunkType.ERROR
    final = True
    event: Literal["graph_refused"] = "graph_refused"
    status: GraphStatus = Field(description="How it ended (`failed`).")
    reason: str = Field(description="Why.")


class Finished(EventModel):
    """A graph's run ended."""

    final = True
    status: GraphStatus = Field(description="How it ended.")
    reason: str | None = Field(default=None, description="Why, when it did not complete.")
    outputs: dict[str, JsonValue] = Field(
        default_factory=dict, description="The outputs of its last tasks (blueprint id -> output; previews)."
    )


class GraphFinished(Finished):
    """The graph completed or failed."""

    chunk_type = TaskChunkType.COMPLETE
    event: Literal["graph_finished"] = "graph_finished"


class GraphCancelled(Finished):
    """The graph was cancelled."""

    chunk_type = TaskChunkType.CANCELLED
    event: Literal["graph_cancelled"] = "graph_cancelled"


StreamEvent = Annotated[
    RequestOpened
    | QuestionAsked
    | GateOpened
    | DecisionTaken
    | ApprovalCounted
    | RequestEscalated
    | ReplyRefused
    | GrantMade
    | GrantRevoked
    | TurnStarted
    | Thinking
    | ToolCalled
    | ToolRestarted
    | ToolUsed
    | ToolRefused
    | TurnAnswered
    | TurnFailed
    | TurnCompleted
    | TurnCancelled
    | CommandEvent
    | SessionStatusChanged
    | SessionEnded
    | SessionCancelled
    | DeliveryFailed
    | GraphStarted
    | TaskChanged
    | EdgeChanged
    | TaskPaused
    | TaskRolledBack
    | GraphChanged
    | PlanRefused
    | GraphRefused
    | GraphFinished
    | GraphCancelled,
    Field(discriminator="event"),
]
"""Every event a stream carries, told apart by `event`."""

EVENT_MODELS: tuple[type[EventModel], ...] = get_args(get_args(StreamEvent)[0])
"""The models of `StreamEvent`, in its order."""


class TaskStreamChunk(Contract):
    """One event of a session's or task's stream; `sequence_id` is its stream offset."""

    workflow_id: str = Field(
        alias="task_id",
        description="Workflow id of the session or task that published it (seed name `task_id`).",
    )
    chunk_type: TaskChunkType = Field(description="What kind of chunk this is: its event's `chunk_type`.")
    sequence_id: int = Field(ge=0, description="Position in the stream, from 0, without gaps.")
    content: StreamEvent = Field(description="The event.")
    timestamp: datetime = Field(description="When it was published (workflow time, UTC).")
    is_final: bool = Field(
        default=False, description="True on the last chunk of a turn: its event's `final`."
    )


class SentChunk(TaskStreamChunk):
    """A chunk as the API sends it (the `data:` of an SSE event): with its event in words."""

    text: str | None = Field(
        default=None, description="What the event says, in a sentence (`core.wording`); not stored."
    )
    tone: Literal["ok", "bad", "note", "call", "graph", "thinking", "plain"] | None = Field(
        default=None,
        description="How the sentence reads: good news, bad news, a note, a tool called, a graph's "
        "progress, a thought, plain.",
    )


class WatchRequest(Contract):
    """A watcher's long-poll on a workflow's chunk stream (the `watch` update)."""

    next_offset: int = Field(ge=0, description="The first sequence id the watcher has not seen yet.")


class WatchResult(Contract):
    """What a `watch` long-poll returns: new chunks, or only where the stream stands now."""

    next_offset: int = Field(ge=0, description="The stream's length: the sequence id of the next chunk.")
    chunks: list[TaskStreamChunk] = Field(
        default_factory=list,
        description="Chunks from the requested offset on, when they fit one answer; empty when the "
        "watcher must read them with the stream's poll query instead.",
    )
    closing: bool = Field(
        default=False, description="The run is ending (completed, cancelled or continuing as new)."
    )
