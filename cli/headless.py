"""`synapse run`: one turn, headless, for scripts and CI.

The prompt goes to a session (a new one unless `--session` names one) and the turn is followed on
its event stream to the end. A request for a person waits for a decision from any channel (HTTP,
Lark, a REPL), up to `--wait-approval` seconds; past that the turn is cancelled (what waits is
denied, the agent is told) and the exit code says so. The answer goes to stdout (`text`), or the
whole turn as one JSON object (`json`) or one JSON line per event and a last `result` line
(`stream-json`); progress goes to stderr in `text` mode.

A session the run started itself (no `--session`) ends with the run (`POST
/sessions/{key}/cancel`, its reason `synapse run ended (<status>)`); a named one goes on.

Exit codes (`Exit`): 0 the turn ended with an answer, nothing denied; 1 the agent failed; 2 bad
input (flags, or a request the API refused: unknown agent or profile, a cancelled session, too
large); 3 a person or an approval rule denied a call; 4 nobody decided in time (`--wait-approval`,
or the session's own approval timeout); 5 the API could not be reached or failed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal, TextIO

import httpx

from contracts import (
    CommandOutput,
    DecisionTaken,
    Principal,
    QuestionAsked,
    RequestOpened,
    SessionCancelled,
    TaskStreamChunk,
    ToolCalled,
    ToolUsed,
    TurnAnswered,
    TurnCancelled,
    TurnCompleted,
    TurnFailed,
)
from contracts.names import SESSION_PREFIX
from core.client import SynapseClient, SynapseError
from core.wording import line_of
from core.wording.turns import failed_text

OutputFormat = Literal["text", "json", "stream-json"]


class Exit(IntEnum):
    """What `synapse run` exits with (see the module docstring)."""

    OK = 0
    AGENT_ERROR = 1
    BAD_INPUT = 2
    DENIED = 3
    TIMED_OUT = 4
    UNAVAILABLE = 5


@dataclass
class Headless:
    """What one `synapse run` is asked to do."""

    api: str
    prompt: str
    session: str | None = None
    api_key: str | None = None
    agent: str | None = None
    profile: str | None = None
    project: str | None = None
    principal: str | None = None
    output: OutputFormat = "text"
    wait_approval: float | None = None


@dataclass
class Turn:
    """What the turn did, as it is reported at the end."""

    session_key: str
    status: str = "running"
    answer: Any = None
    error: str | None = None
    exit: Exit = Exit.OK
    calls: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    waiting: dict[str, float] = field(default_factory=dict)
    """Interactions waiting for a person → when (loop time) the wait for them runs out."""

    def result(self) -> dict[str, Any]:
        return {
            "type": "result",
            "session_key": self.session_key,
            "status": self.status,
            "exit_code": int(self.exit),
            "exit": self.exit.name.lower(),
            "answer": self.answer,
            "error": self.error,
            "tool_calls": self.calls,
            "decisions": self.decisions,
        }


def run_headless(job: Headless, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Run the turn; its exit code."""
    if not job.prompt.strip():
        print("error: -p/--prompt is empty: say what the agent should do", file=err)
        return Exit.BAD_INPUT
    return asyncio.run(_run(job, out, err))


async def _run(job: Headless, out: TextIO, err: TextIO) -> int:
    turn = Turn(session_key=job.session or f"run-{uuid.uuid4().hex[:10]}")
    say = _Reporter(job.output, out, err)
    try:
        async with SynapseClient(job.api, api_key=job.api_key) as synapse:
            await _open(synapse, job, turn.session_key)
            say.note(f"session {turn.session_key}: {job.prompt}")
            await _follow(synapse, job, turn, say)
            if job.session is None:
                await _end(synapse, job, turn)
    except SynapseError as failure:
        turn.error = f"the API answered {failure.status}: {failure.detail}"
        turn.status, turn.exit = (
            "refused",
            Exit.BAD_INPUT if 400 <= failure.status < 500 else Exit.UNAVAILABLE,
        )
    except httpx.HTTPError as failure:
        turn.error = f"the API at {job.api} could not be reached: {failure}"
        turn.status, turn.exit = "unreachable", Exit.UNAVAILABLE
    say.end(turn)
    return int(turn.exit)


async def _open(synapse: SynapseClient, job: Headless, key: str) -> None:
    """Create the session with what the flags ask for (an existing one is used as it is)."""
    fields = {"agent_id": job.agent, "profile": job.profile, "project": job.project}
    given = {name: value for name, value in fields.items() if value}
    if not given:
        return
    try:
        await synapse.create_session(key, **given)
    except SynapseError as failure:
        if failure.status != 409:  # 409: it exists; the message goes to it as it is
            raise


async def _end(synapse: SynapseClient, job: Headless, turn: Turn) -> None:
    """End the session this run started, so that it does not list as active for ever (a session
    named with `--session` goes on: later runs may follow up in it)."""
    try:
        await synapse.cancel(turn.session_key, f"synapse run ended ({turn.status})", job.principal)
    except SynapseError as failure:
        if failure.status != 409:  # 409: it has already ended
            raise


async def _follow(synapse: SynapseClient, job: Headless, turn: Turn, say: _Reporter) -> None:
    loop = asyncio.get_running_loop()
    chunks = synapse.turn(turn.session_key, job.prompt, principal=job.principal)
    while True:
        deadline = min(turn.waiting.values(), default=None)
        try:
            async with asyncio.timeout_at(deadline):
                chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except TimeoutError:
            late = sorted(i for i, at in turn.waiting.items() if at <= loop.time())
            turn.status, turn.exit = "timed_out", Exit.TIMED_OUT
            turn.error = (
                f"nobody decided {', '.join(late)} within {job.wait_approval:g} s; the turn was cancelled"
            )
            await chunks.aclose()
            await synapse.cancel_turn(turn.session_key, f"synapse run: {turn.error}", job.principal)
            return
        say.chunk(chunk)
        _take(turn, chunk, job, loop.time())
        if chunk.is_final:
            return


def _take(turn: Turn, chunk: TaskStreamChunk, job: Headless, now: float) -> None:
    """Fold one chunk's event into what the turn did."""
    event = chunk.content
    if isinstance(event, RequestOpened | QuestionAsked) and job.wait_approval is not None:
        turn.waiting[event.request.interaction_id] = now + job.wait_approval
    elif isinstance(event, ToolCalled):
        turn.calls.append(
            {"tool": event.tool_name, "arguments": event.tool_params, "interaction_id": event.interaction_id}
        )
    elif isinstance(event, ToolUsed):
        call = next((c for c in reversed(turn.calls) if c["interaction_id"] == event.interaction_id), None)
        if call is not None:
            call["result"] = event.result.model_dump(mode="json")
    elif isinstance(event, DecisionTaken):
        turn.waiting.pop(event.interaction_id, None)
        turn.decisions.append(event.model_dump(mode="json", exclude_none=True))
        if not event.approved and turn.exit == Exit.OK:
            turn.exit = Exit.TIMED_OUT if event.decided_by == Principal.TIMEOUT else Exit.DENIED
    elif isinstance(event, TurnAnswered):
        turn.answer, turn.status = event.answer, "completed"
    elif isinstance(event, TurnFailed):  # the agent's failure
        turn.status, turn.error, turn.exit = "failed", failed_text(event), Exit.AGENT_ERROR
    elif isinstance(event, TurnCancelled | SessionCancelled):  # a person cancelled the turn (or the session)
        turn.status = "cancelled"
        by = event.by if isinstance(event, TurnCancelled) else "someone"
        turn.error = f"cancelled by {by}: {event.reason or 'no reason given'}"
        turn.exit = Exit.DENIED if turn.exit == Exit.OK else turn.exit
    elif isinstance(event, TurnCompleted) and turn.status == "running":
        turn.status = "completed"


class _Reporter:
    """Writes the turn as the output format says."""

    def __init__(self, output: OutputFormat, out: TextIO, err: TextIO) -> None:
        self.output, self.out, self.err = output, out, err

    def note(self, text: str) -> None:
        if self.output == "text":
            print(text, file=self.err, flush=True)

    def chunk(self, chunk: TaskStreamChunk) -> None:
        if self.output == "stream-json":
            print(chunk.model_dump_json(by_alias=True), file=self.out, flush=True)
        elif self.output == "text" and (line := _progress(chunk)):
            print(line, file=self.err, flush=True)

    def end(self, turn: Turn) -> None:
        if self.output == "text":
            if turn.answer is not None:
                text = (
                    turn.answer
                    if isinstance(turn.answer, str)
                    else json.dumps(turn.answer, ensure_ascii=False)
                )
                print(text, file=self.out, flush=True)
            if turn.error:
                print(f"error: {turn.error}", file=self.err, flush=True)
        else:
            print(json.dumps(turn.result(), ensure_ascii=False, default=str), file=self.out, flush=True)


def _progress(chunk: TaskStreamChunk) -> str | None:
    """A line for stderr about a chunk people want to know of while they wait (None: nothing)."""
    event = chunk.content
    if isinstance(event, RequestOpened):
        where = f"POST /sessions/{_key(chunk)}/interactions/{event.request.interaction_id}"
        return f"{line_of(event).text} (decide: {where})"
    if isinstance(event, QuestionAsked | DecisionTaken | ToolCalled):
        return line_of(event).text
    if isinstance(event, CommandOutput):
        return event.text.rstrip("\n") or None
    return None


def _key(chunk: TaskStreamChunk) -> str:
    return chunk.workflow_id.removeprefix(SESSION_PREFIX)
