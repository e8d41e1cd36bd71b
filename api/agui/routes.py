"""`POST /ag-ui` (and `/ag-ui/{agent_id}`): an AG-UI run on the session `agui:<threadId>`;
`GET /ag-ui/{threadId}/state`: its conversation and what waits, for a frontend that reconnects.

A run is one of three, by its `RunAgentInput`:
- `resume` (answers to the interrupts a run ended with): each entry is decided through the one
  decision door as the caller (approver or higher; recorded with channel `ag-ui`), then the run
  follows the session from that decision. An interrupt decided elsewhere already is reported
  (`CUSTOM synapse.already_decided`), not decided again. Nothing is kept in this process: any API
  process takes any run.
- a new user message (the last of `messages`; a client sends the whole conversation each run, and a
  message the session has is not sent again): delivered by signal-with-start (the first starts the
  session), and the run follows its turn. While a request waits, a message would be read as the
  reply that denies it, so it is not delivered: the run ends with what waits.
- neither: a reconnect. `MESSAGES_SNAPSHOT`, then the run ends with what waits.
A `resume` with a new message: the resume first; once its turn ended with nothing waiting, the
message is delivered and the same run follows its turn (while something waits, it ends with that).
Everything that can be refused is an HTTP status before the stream starts; after `RUN_STARTED` only
`RUN_ERROR`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC
from functools import partial
from typing import Annotated, Any

from ag_ui.core import BaseEvent, CustomEvent, MessagesSnapshotEvent, ResumeEntry, RunAgentInput, UserMessage
from fastapi import APIRouter, Depends, HTTPException, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from temporalio.client import Client

from contracts import (
    AuditEntry,
    AuditKind,
    ErrorType,
    InboundMessage,
    InteractionOutcome,
    LiveSession,
)
from contracts.session import AGENT_ID_PATTERN
from core.agent_registry import DEFAULT_AGENT, AgentRegistry
from core.security import Caller, Role
from core.settings import Settings
from workflows.identity.ids import session_workflow_id

from ..calls import decisions, scope, sessions
from ..calls.decisions import AGUI_CHANNEL
from ..calls.errors import Invalid, NotFound, Problem, Refused
from ..calls.ref import WorkflowRef
from ..calls.sizes import check_size
from ..deps import MAX_ID_LENGTH, ClientDep, HubDep, RegistryDep, SettingsDep, Viewer, json_or_none, require
from ..errors import BUSY_RESPONSE, ERROR_RESPONSES
from ..limits import MESSAGE_HINT
from ..routes.sessions import message_project
from ..scope import owners
from ..sse.hub import StreamHub
from ..sse.response import sse_response
from .conversation import MESSAGE_ID_PREFIX, agui_messages
from .interrupts import decision_body, interrupt_of
from .mapping import CUSTOM_PREFIX, RunMapper
from .stream import Follow, RunStream

router = APIRouter(prefix="/ag-ui", tags=["ag-ui"])

THREAD_ID_PATTERN = r"^[A-Za-z0-9_.:@-]{1,194}$"
"""A thread id: what a session key allows, after its `agui:` prefix."""
SESSION_PREFIX = "agui:"
"""The session of thread `T` is `agui:T`."""
MAX_RESUME_ENTRIES = 100
"""The most `resume` entries one run takes (each is a decision, or a refusal recorded in history)."""
RUN_MARKER = "agui-run:"
"""A resume's decisions carry `agui-run:<runId>` as their message id: the run's stream starts there."""

ThreadId = Annotated[str, Path(pattern=THREAD_ID_PATTERN, description="The AG-UI thread id.")]
AgentId = Annotated[
    str,
    Path(pattern=AGENT_ID_PATTERN, max_length=200, description="`Agent:<name>`: the agent of a new thread."),
]

RUN_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {}},
        "description": "AG-UI events (`data: <event JSON>`), from `RUN_STARTED` to `RUN_FINISHED` (its "
        "`outcome` an `interrupt` while a request waits for a person) or `RUN_ERROR`.",
    },
    **ERROR_RESPONSES(
        403,
        404,
        409,
        413,
        s403="A viewer's key; or a `resume` from a key below approver (recorded in the audit trail), or "
        "a decision the request's approvers or policy refuse.",
        s404="A `resume` for a thread that has no session.",
        s409="The thread's session was cancelled; or a decision the workflow refused (two-person rule).",
    ),
    **BUSY_RESPONSE,
}


def _refused(loc: tuple[str | int, ...], msg: str, value: object) -> dict[str, object]:
    return {"loc": ("body", *loc), "msg": msg, "type": "value_error", "input": value}


def session_key(body: RunAgentInput) -> str:
    """The session of the run's thread; 422 naming each id no session can keep: a `threadId` no
    session key can hold, a `runId`, interrupt id or the new message's id over MAX_ID_LENGTH."""
    problems = []
    if not re.fullmatch(THREAD_ID_PATTERN, body.thread_id):
        where = f"a thread id matches {THREAD_ID_PATTERN} (the session is agui:<threadId>)"
        problems.append(_refused(("threadId",), where, body.thread_id))
    longest = f"at most {MAX_ID_LENGTH} characters"
    if not 0 < len(body.run_id) <= MAX_ID_LENGTH:
        problems.append(_refused(("runId",), f"1 to {MAX_ID_LENGTH} characters", body.run_id[:50]))
    if len(body.resume or []) > MAX_RESUME_ENTRIES:
        where = f"at most {MAX_RESUME_ENTRIES} entries; answer the rest in the next run"
        problems.append(_refused(("resume",), where, len(body.resume or [])))
    for index, entry in enumerate(body.resume or []):
        if not 0 < len(entry.interrupt_id) <= MAX_ID_LENGTH:
            problems.append(_refused(("resume", index, "interruptId"), longest, entry.interrupt_id[:50]))
    last = body.messages[-1] if body.messages else None
    if last is not None and not 0 < len(last.id) <= MAX_ID_LENGTH:
        problems.append(_refused(("messages", len(body.messages) - 1, "id"), longest, last.id[:50]))
    if problems:
        raise RequestValidationError(problems)
    return SESSION_PREFIX + body.thread_id


async def _status(client: Client, key: str, settings: Settings) -> LiveSession | None:
    try:
        return await sessions.get_status(client, key, wait=settings.api.query_wait)
    except NotFound:
        return None


def _snapshot(status: LiveSession | None) -> MessagesSnapshotEvent:
    return MessagesSnapshotEvent(messages=agui_messages(status.messages if status is not None else []))


def _turn(body: RunAgentInput) -> UserMessage | None:
    """The run's new user message: the last of `messages`, when a user said it."""
    last = body.messages[-1] if body.messages else None
    return last if isinstance(last, UserMessage) else None


def _text(body: RunAgentInput, message: UserMessage) -> str:
    """A user message's text (its text parts joined); 422 naming a part that is not text."""
    texts: list[str] = [message.content] if isinstance(message.content, str) else []
    for index, part in enumerate([] if isinstance(message.content, str) else message.content):
        text = getattr(part, "text", None)
        if getattr(part, "type", None) != "text" or not isinstance(text, str):
            where = ("messages", len(body.messages) - 1, "content", index)
            raise RequestValidationError([_refused(where, "only text parts can be sent to an agent", None)])
        texts.append(text)
    text = "\n".join(texts)
    if not text.strip():
        raise RequestValidationError(
            [
                _refused(
                    ("messages", len(body.messages) - 1, "content"), "the message to the agent is empty", text
                )
            ]
        )
    return text


def _already_decided(interaction_id: str, entry: AuditEntry) -> CustomEvent:
    return CustomEvent(
        name=CUSTOM_PREFIX + "already_decided",
        value={
            "interruptId": interaction_id,
            "approved": entry.kind == AuditKind.APPROVED,
            "decidedBy": entry.principal,
            "channel": entry.channel,
            "at": entry.at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "text": f"{interaction_id} was already {entry.kind.value} by {entry.principal} "
            f"({entry.channel}); a decision is not taken twice",
        },
    )


async def _resume(
    request: Request,
    body: RunAgentInput,
    resume: list[ResumeEntry],
    caller: Caller,
    status: LiveSession,
    mapper: RunMapper,
) -> tuple[list[BaseEvent], frozenset[str]]:
    """Decide every entry as the caller; what the run says first (interrupts decided elsewhere), and
    the interrupts decided now (the run follows the session from the first decision).

    Raises:
        Invalid: An entry names no interrupt of the thread, or its payload does not answer it (each
            problem named `resume.<i>.<field>`); nothing was decided.
        Refused, NotFound, Closed: The decision door refused one (earlier ones stand).
    """
    client: Client = request.app.state.client
    settings: Settings = request.app.state.settings
    key, wait, marker = status.session_id, settings.api.query_wait, RUN_MARKER + body.run_id
    pending = {r.interaction_id: r for r in status.pending_interactions}
    problems: list[Problem] = []
    decide: list[tuple[str, Any]] = []
    before: list[BaseEvent] = []
    for index, entry in enumerate(resume):
        waiting = pending.get(entry.interrupt_id)
        if waiting is None:
            taken = await decisions.recorded_decision(client, key, entry.interrupt_id, wait=wait)
            if taken is not None:
                before.append(_already_decided(entry.interrupt_id, taken))
                continue
            problems.append(
                Problem(
                    ("resume", index, "interruptId"),
                    f"no interrupt {entry.interrupt_id!r} waits in thread {body.thread_id!r}; "
                    f"waiting: {sorted(pending) or 'none'}",
                    "not_found",
                )
            )
            continue
        made = decision_body(index, entry, waiting, marker)
        if isinstance(made, list):
            problems += made
        else:
            decide.append((entry.interrupt_id, made))
            mapper.announced[entry.interrupt_id] = waiting.ask.kind
    if problems:
        raise Invalid(problems)
    decided: set[str] = set()
    for interaction_id, made in decide:
        try:
            result = await decisions.decide(
                client,
                settings,
                caller,
                target=WorkflowRef.session(key),
                interaction_id=interaction_id,
                body=made,
                channel=AGUI_CHANNEL,
            )
        except Refused as refusal:  # decided elsewhere in between: reported, as one decided before
            taken = await decisions.recorded_decision(client, key, interaction_id, wait=wait)
            if refusal.error_type != ErrorType.INTERACTION_ALREADY_DECIDED or taken is None:
                raise
            before.append(_already_decided(interaction_id, taken))
            continue
        if isinstance(result, InteractionOutcome):
            request.app.state.metrics.decided(result)
        decided.add(interaction_id)
    return before, frozenset(decided)


async def record_refused_resume(request: Request, caller: Caller, thread_id: object, resume: object) -> None:
    """Record, in the thread's session audit, each `resume` entry of a caller whose role may not
    decide (read from the body as sent: entries without a usable `interruptId` are not recorded)."""
    if not isinstance(thread_id, str) or not re.fullmatch(THREAD_ID_PATTERN, thread_id):
        return
    workflow_id = session_workflow_id(SESSION_PREFIX + thread_id)
    entries = resume[:MAX_RESUME_ENTRIES] if isinstance(resume, list) else []
    named = [entry.get("interruptId") for entry in entries if isinstance(entry, dict)]
    ids = [i for i in named if isinstance(i, str) and 0 < len(i) <= MAX_ID_LENGTH]
    for interrupt_id in dict.fromkeys(ids):  # each interrupt once: a long body is no way to fill a history
        await decisions.record_refused_caller(
            request.app.state.client, workflow_id, caller, interrupt_id, None, AGUI_CHANNEL
        )


async def _refused_run(request: Request, caller: Caller) -> None:
    """A caller below operator: the decisions a `resume` in its body tried are recorded, as every
    door records a refused decision."""
    body = await json_or_none(request)
    if isinstance(body, dict) and body.get("resume"):
        await record_refused_resume(request, caller, body.get("threadId"), body["resume"])


RunCaller = Annotated[Caller, Depends(require(Role.operator, refused=_refused_run))]
"""An operator or higher runs a thread; a lower caller's `resume` is recorded before the 403."""


async def _refuse_resume(request: Request, caller: Caller, body: RunAgentInput) -> None:
    """403 for an operator sending a `resume`, each entry recorded in the audit trail."""
    entries = [{"interruptId": entry.interrupt_id} for entry in body.resume or []]
    await record_refused_resume(request, caller, body.thread_id, entries)
    raise HTTPException(
        403,
        f"{caller.principal} has role {caller.role.name}; a resume decides what waits and needs approver or higher",
    )


async def _run(runner: Runner, body: RunAgentInput, agent_id: str | None) -> StreamingResponse:
    """One run: a resume, a new message's turn, or a reconnect (the module says which is which)."""
    request, client, settings, caller = runner.request, runner.client, runner.settings, runner.caller
    key = session_key(body)
    if body.resume and caller.role < Role.approver:
        await _refuse_resume(request, caller, body)
    project = await message_project(request, client, caller, key) if caller.projects is not None else None
    status = await _status(client, key, settings)
    run = RunStream(client, runner.hub, key, body.thread_id, body.run_id, settings.api.query_wait)
    mapper = RunMapper()
    turn = _turn(body)
    known = {m.metadata.get("message_id") for m in status.messages} if status is not None else set()
    if turn is not None and MESSAGE_ID_PREFIX + turn.id in known:  # a client resending the conversation
        turn = None
    message = None if turn is None else _message(runner, body, turn, key)
    sender = Sender(runner, key, agent_id, project)
    if body.resume:
        if status is None:
            raise NotFound(f"thread {body.thread_id!r} has no session ({key}): no interrupt waits in it")
        before, decided = await _resume(request, body, body.resume, caller, status, mapper)
        if decided:  # the run follows the decisions; a new message is the next turn, if nothing waits then
            left_out = any(r.interaction_id not in decided for r in status.pending_interactions)
            follow = Follow(sessions.stream_head(status) - 1, RUN_MARKER + body.run_id, decided, left_out)
            then = None if message is None else partial(sender.send_unless_waiting, message)
            return sse_response(run.body(before, follow, mapper, status, then))
        status = await _status(client, key, settings)
        before.append(_snapshot(status))
        if message is None or (status is not None and status.pending_interactions):
            return sse_response(run.body(before, None, mapper, status))
        return sse_response(run.body(before, await sender.send(message, status), mapper, status))
    if message is None:  # a reconnect: what the session has
        return sse_response(run.body([_snapshot(status)], None, mapper, status))
    if status is not None and status.pending_interactions:  # the interrupts first: a `resume` answers them
        return sse_response(run.body([], None, mapper, status))
    return sse_response(run.body([], await sender.send(message, status), mapper, status))


def _message(runner: Runner, body: RunAgentInput, turn: UserMessage, key: str) -> InboundMessage:
    """The run's new user message as the session takes it; 422 or 413 when it cannot be sent."""
    text = _text(body, turn)
    limit = runner.settings.limits.max_message_bytes
    check_size("content", text, limit, "SYNAPSE_MAX_MESSAGE_BYTES", MESSAGE_HINT)
    return InboundMessage(
        channel=AGUI_CHANNEL,
        sender_id=runner.caller.principal or "anonymous",
        role=runner.caller.role,
        chat_id=key,
        content=text,
        message_id=MESSAGE_ID_PREFIX + turn.id,
        may_reply=False,  # decisions come as `resume`: a message is never read as one
    )


@dataclass(frozen=True)
class Sender:
    """Delivers a run's new message to the thread's session (signal-with-start: the first starts it)."""

    runner: Runner
    key: str
    agent_id: str | None
    project: str | None

    async def send(self, message: InboundMessage, status: LiveSession | None) -> Follow:
        """Deliver `message`; where the run finds its turn on the session's stream.

        Raises:
            Cancelled: The session was cancelled (409, saying who cancelled it).
        """
        client, settings = self.runner.client, self.runner.settings
        agent_id = self.agent_id or (status.agent_id if status is not None else DEFAULT_AGENT)
        agent = self.runner.registry.resolve(agent_id, self.key)
        config = sessions.new_config(settings, self.key, agent, agent_id=agent_id, channel=AGUI_CHANNEL)
        if self.project is not None:
            config = config.model_copy(update={"project": self.project})
        previous = await sessions.accepting(client, self.key, wait=settings.api.query_wait)
        after = (0 if previous is not None else sessions.stream_head(status)) - 1
        await sessions.send_message(
            client, settings.temporal.task_queue, config, message, within=settings.api.busy_retry_seconds
        )
        assert message.message_id is not None
        return Follow(after, message.message_id)

    async def send_unless_waiting(self, message: InboundMessage) -> Follow | LiveSession:
        """After a resumed turn: deliver `message` as the next turn, unless a request waits then (a
        message would wait behind it, unanswered): then the session, whose requests end the run."""
        status = await _status(self.runner.client, self.key, self.runner.settings)
        if status is not None and status.pending_interactions:
            return status
        return await self.send(message, status)


@dataclass(frozen=True)
class Runner:
    """What a run needs of the request (`Depends(runner)`): the app's parts and the caller."""

    request: Request
    client: Client
    settings: Settings
    hub: StreamHub
    registry: AgentRegistry
    caller: Caller


async def runner(
    request: Request,
    client: ClientDep,
    settings: SettingsDep,
    hub: HubDep,
    registry: RegistryDep,
    caller: RunCaller,
) -> Runner:
    """The parts of the app a run uses, for an operator or higher."""
    return Runner(request, client, settings, hub, registry, caller)


RunnerDep = Annotated[Runner, Depends(runner)]


@router.post("", response_class=StreamingResponse, responses=RUN_RESPONSES)
async def run_thread(body: RunAgentInput, run: RunnerDep) -> StreamingResponse:
    """Run an AG-UI thread (`RunAgentInput` in, AG-UI events out as SSE) on the session
    `agui:<threadId>`, started with the default agent on first use. See `docs/ag-ui.md`."""
    return await _run(run, body, None)


@router.post("/{agent_id}", response_class=StreamingResponse, responses=RUN_RESPONSES)
async def run_thread_with(agent_id: AgentId, body: RunAgentInput, run: RunnerDep) -> StreamingResponse:
    """`POST /ag-ui`, a new thread's session started with this agent (`Agent:<name>`); a thread that
    has a session keeps its agent."""
    return await _run(run, body, agent_id)


@router.get("/{thread_id}/state", responses=ERROR_RESPONSES(401, 403, 404, 422))
async def thread_state(
    thread_id: ThreadId, request: Request, client: ClientDep, settings: SettingsDep, caller: Viewer
) -> dict[str, Any]:
    """The thread's conversation as AG-UI messages (`messages`, as `MESSAGES_SNAPSHOT` gives them)
    and what waits for a person (`interrupts`, as a run's `RUN_FINISHED` lists them)."""
    key = SESSION_PREFIX + thread_id
    await scope.check(client, owners(request), caller, WorkflowRef.session(key), may_start=False)
    status = await sessions.get_status(client, key, wait=settings.api.query_wait)
    return {
        "threadId": thread_id,
        "messages": [m.model_dump(mode="json", by_alias=True) for m in agui_messages(status.messages)],
        "interrupts": [
            interrupt_of(r).model_dump(mode="json", by_alias=True) for r in status.pending_interactions
        ],
    }
