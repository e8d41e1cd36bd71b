"""The agent loop shared by sessions and graph tasks.

One turn: ask the agent (`agent_step` activity) what it wants; a `FinalAnswer` ends the
turn, a `PlanBlueprint` is handed to the caller, a `ToolCallRequest` is assessed against
the tool's approval policy (`assess_tool_call` local activity), approved by a person when
needed (through the host), run (`run_tool` activity) and its result, or the denial, goes
back to the agent. Repeats until an answer, bounded by `max_turns`.

Determinism: every decision here comes from activity results, host state or
`workflow.now()`. Changing the order or kind of commands issued here (activities, timers)
breaks replay of running workflows: put such changes behind `workflow.patched()`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, Protocol

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError, TimeoutType

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ASK_USER,
        AgentResult,
        AgentSpec,
        AgentStepInput,
        ArtifactRef,
        AssessRequest,
        ErrorType,
        FailureDetails,
        FinalAnswer,
        InteractionOutcome,
        PlanBlueprint,
        Principal,
        SandboxProfile,
        TaskChunkType,
        ToolAssessment,
        ToolCallBatch,
        ToolCallRequest,
        ToolResult,
        ToolRun,
        UniversalMessage,
        WorkerBinding,
    )

from .chunk_stream import Publish
from .supervision import sandbox

AGENT_STEP = "agent_step"
ASSESS_TOOL_CALL = "assess_tool_call"
RUN_TOOL = "run_tool"

AGENT_STEP_TIMEOUT = timedelta(minutes=10)
"""A model call (several, with the adapter's own retries) fits in this."""
AGENT_STEP_RETRY = RetryPolicy(  # from 1 s, doubling
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Auth and validation failures of a model come back as FAILURE results, not errors.
    non_retryable_error_types=[ErrorType.UNKNOWN_AGENT, ErrorType.INVALID_AGENT_INPUT],
)
ASSESS_TIMEOUT = timedelta(seconds=10)
"""Assessment is a policy lookup and a SQL parse: milliseconds."""
ASSESS_RETRY = RetryPolicy(maximum_attempts=3)
RUN_TOOL_TIMEOUT = timedelta(minutes=5)
QUICK_TOOL_TIMEOUT = timedelta(seconds=30)
"""A quick tool (SQL: ~2 ms) that takes this long is retried; its claim makes the retry safe."""
LOCAL_TOOL_RUN_PATCH = "quick-tools-run-as-local-activities"
"""Patch id: quick tools became local activities (approval → applied ~35 ms instead of ~80 ms)."""
RUN_TOOL_RETRY = RetryPolicy(
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    # Tool errors and bad arguments are results (`ok=False`); what raises is worth a retry.
    non_retryable_error_types=[],
)


class LoopHost(Protocol):
    """What the loop needs from the workflow that runs it."""

    @property
    def owner_id(self) -> str:
        """Workflow id of the session or task."""
        ...

    publish: Publish
    """Publish one chunk on the workflow's stream."""

    async def ask_approval(
        self, call: ToolCallRequest, assessment: ToolAssessment, *, edit_of: InteractionOutcome | None = None
    ) -> InteractionOutcome:
        """Open an interaction and wait for its decision (or timeout, or cancel); a grant may allow it at once."""
        ...

    async def ask_user(self, call: ToolCallRequest) -> InteractionOutcome:
        """Ask the person the call's `question` and wait for the answer (or timeout, or cancel)."""
        ...

    async def checkpoint(self) -> bool:
        """Wait while paused; False when the work was cancelled."""
        ...

    def tool_finished(self, interaction_id: str | None, result: ToolResult) -> None:
        """Record the result of an approved run (it answers the approver's update)."""
        ...

    @property
    def worker_queues(self) -> dict[str, str]:
        """Per worker-bound tool, the task queue of the worker holding its state (`LOST`: gone)."""
        ...

    @property
    def sandbox(self) -> SandboxProfile | None:
        """The sandbox the session or its agent chose for approved calls (None: the tool's default)."""
        ...

    @property
    def tool_states(self) -> dict[str, dict[str, Any]]:
        """Per worker-bound tool, the metadata of its last result (where it left its state)."""
        ...


@dataclass
class LoopOutcome:
    """How a turn ended."""

    kind: Literal["answer", "plan", "failure", "cancelled", "max_turns"]
    answer: Any = None
    artifact: ArtifactRef | None = None
    """The whole answer when it was too large to carry (`answer` is then its preview)."""
    plan: PlanBlueprint | None = None
    failure: FailureDetails | None = None


CANCELLATION_PROPAGATES_PATCH = "loop-cancellation-propagates"
"""Patch id: an activity cancelled because the workflow was cancelled cancels the loop too."""


def _raise_if_cancelled(err: ActivityError) -> None:
    """A workflow being cancelled cancels its activities: the loop ends cancelled, not failed."""
    if isinstance(err.cause, CancelledError) and workflow.patched(CANCELLATION_PROPAGATES_PATCH):
        raise asyncio.CancelledError() from err


def _error_message(err: BaseException) -> str:
    cause = err.cause if isinstance(err, ActivityError) else None
    if isinstance(cause, ApplicationError):
        return cause.message
    return str(cause or err)


def _tool_message(
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


ASK_USER_PATCH = "ask-user-questions"
"""Patch id: an `ask_user` call is a question to the person (before: an unknown tool)."""
EDITED_CALLS_PATCH = "approve-with-edits"
"""Patch id: an approval's `response_data.arguments` replaces the call's arguments (re-assessed)."""

_UNANSWERED_BY: dict[str, str] = {
    Principal.TIMEOUT: "nobody answered the question in time",
    Principal.CANCEL: "the session was cancelled",
}

_DENIED_BY: dict[str, str] = {
    Principal.TIMEOUT: "the approval request timed out",
    Principal.CANCEL: "the session was cancelled",
}


def _denial(outcome: InteractionOutcome) -> dict[str, Any]:
    reason = _DENIED_BY.get(outcome.decided_by, "a person denied it")
    return {
        "denied": True,
        "decided_by": outcome.decided_by,
        "message": outcome.comment,
        "reason": reason,
    }


def context_messages(messages: list[UniversalMessage], agent: AgentSpec | None) -> list[UniversalMessage]:
    """The conversation the agent is shown: all of it, or the last `last_n` messages.

    A cut never separates tool results from the assistant message that asked for them.
    """
    history = agent.context.conversation_history_config if agent else None
    last_n = history.get("last_n") if history else None
    if not isinstance(last_n, int) or last_n <= 0 or last_n >= len(messages):
        return messages
    start = len(messages) - last_n
    while start > 0 and messages[start].role == "tool":
        start -= 1
    return messages[start:]


def step_input(
    host: LoopHost,
    agent_id: str,
    agent: AgentSpec | None,
    messages: list[UniversalMessage],
    input_data: dict[str, Any] | None,
) -> AgentStepInput:
    """Everything the agent may see, built here so the Web UI shows it as the activity's input."""
    return AgentStepInput(
        agent_id=agent_id,
        owner_id=host.owner_id,
        messages=context_messages(messages, agent),
        tools=list(agent.tools) if agent and agent.context.include_tool_list else [],
        input_data=input_data,
        agent=agent,
    )


async def run_agent_loop(
    host: LoopHost,
    *,
    agent_id: str,
    messages: list[UniversalMessage],
    input_data: dict[str, Any] | None = None,
    max_turns: int,
    agent: AgentSpec | None = None,
) -> LoopOutcome:
    """Run the agent until it answers; `messages` is extended in place with the exchange."""
    for _ in range(max_turns):
        if not await host.checkpoint():
            return LoopOutcome("cancelled")
        step = step_input(host, agent_id, agent, messages, input_data)
        try:
            result = await workflow.execute_activity(
                AGENT_STEP,
                step,
                result_type=AgentResult,
                start_to_close_timeout=AGENT_STEP_TIMEOUT,
                retry_policy=AGENT_STEP_RETRY,
                summary=f"agent {agent_id}",
            )
        except ActivityError as err:
            _raise_if_cancelled(err)
            details = FailureDetails(type="RESOURCE_UNAVAILABLE", message=_error_message(err))
            return LoopOutcome("failure", failure=details)
        if result.output.thought:
            host.publish(TaskChunkType.THINKING, result.output.thought)
        if result.status == "FAILURE":
            details = result.failure_details or FailureDetails(
                type="LLM_REFUSAL", message="the agent failed without details"
            )
            return LoopOutcome("failure", failure=details)
        intent = result.output.intent
        if isinstance(intent, FinalAnswer):
            messages.append(
                UniversalMessage(role="assistant", content=intent.content, timestamp=workflow.now())
            )
            return LoopOutcome("answer", answer=intent.content, artifact=intent.artifact)
        if isinstance(intent, PlanBlueprint):
            messages.append(
                UniversalMessage(
                    role="assistant",
                    content={"plan": intent.model_dump(mode="json")},
                    timestamp=workflow.now(),
                )
            )
            return LoopOutcome("plan", plan=intent)
        if isinstance(intent, ToolCallBatch):
            # One assistant message with every call, then one result per call, in order: a
            # denial answers its own call and the others still run.
            calls = [call.model_dump(mode="json") for call in intent.calls]
            messages.append(
                UniversalMessage(role="assistant", content={"tool_calls": calls}, timestamp=workflow.now())
            )
            for call in intent.calls:
                if not await host.checkpoint():
                    return LoopOutcome("cancelled")
                await _gate_and_run(host, call, messages)
            continue
        messages.append(
            UniversalMessage(
                role="assistant",
                content={"tool_call": intent.model_dump(mode="json")},
                timestamp=workflow.now(),
            )
        )
        await _gate_and_run(host, intent, messages)
    return LoopOutcome("max_turns")


async def _assess(call: ToolCallRequest, state: dict[str, Any] | None) -> ToolAssessment:
    """Assess the call; with `state` (the `terminal-sandbox` patch), knowing where its tool's state is."""
    assessment: ToolAssessment = await workflow.execute_local_activity(
        ASSESS_TOOL_CALL,
        call if state is None else AssessRequest(call=call, state=state),
        result_type=ToolAssessment,
        start_to_close_timeout=ASSESS_TIMEOUT,
        retry_policy=ASSESS_RETRY,
        summary=f"assess {call.tool_id}",
    )
    return assessment


def _refuse_unknown(
    host: LoopHost, call: ToolCallRequest, assessment: ToolAssessment, messages: list[UniversalMessage]
) -> None:
    result = ToolResult(tool_id=call.tool_id, ok=False, error=assessment.reason)
    host.publish(TaskChunkType.ERROR, {"tool_name": call.tool_id, "error": assessment.reason})
    messages.append(_tool_message(call, result.model_dump(mode="json"), None))


async def _ask_user(host: LoopHost, call: ToolCallRequest, messages: list[UniversalMessage]) -> None:
    """The agent's question: ask the person, and give the agent the answer (or why there is none)."""
    question = call.arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        result = ToolResult(
            tool_id=call.tool_id,
            ok=False,
            error="ask_user needs `question`: the question, as a non-empty string",
        )
        host.publish(TaskChunkType.ERROR, {"tool_name": call.tool_id, "error": result.error})
        messages.append(_tool_message(call, result.model_dump(mode="json"), None))
        return
    outcome = await host.ask_user(call)
    if outcome.approved:
        answer = (outcome.response_data or {}).get("text")
        result = ToolResult(
            tool_id=call.tool_id,
            ok=True,
            content={"question": question.strip(), "answer": answer, "answered_by": outcome.decided_by},
        )
        host.tool_finished(outcome.interaction_id, result)
        messages.append(_tool_message(call, result.model_dump(mode="json"), outcome.interaction_id))
        return
    denial = _denial(outcome)
    denial["reason"] = _UNANSWERED_BY.get(outcome.decided_by, "the person declined to answer")
    messages.append(_tool_message(call, denial, outcome.interaction_id))


def _tool_state(host: LoopHost, call: ToolCallRequest, messages: list[UniversalMessage]) -> dict[str, Any]:
    """The metadata of the tool's last result (where it left its state), while the worker holding
    that state still does; empty for every other tool. Kept in the state (older messages are let
    go); a session from before that looks in its conversation."""
    if not host.worker_queues.get(call.tool_id):
        return {}
    if call.tool_id in host.tool_states:
        return host.tool_states[call.tool_id]
    for message in reversed(messages):
        if message.role == "tool" and message.name == call.tool_id and isinstance(message.content, dict):
            metadata = message.content.get("metadata")
            if isinstance(metadata, dict):
                return metadata
    return {}


def _with_context(
    host: LoopHost, call: ToolCallRequest, assessment: ToolAssessment, messages: list[UniversalMessage]
) -> ToolAssessment:
    """The assessment with its `context` brought up to date: a worker-bound tool whose state is
    still held (a terminal's shell) is where its last result left it (its `cwd`)."""
    if not assessment.context or assessment.worker_bound is None or not host.worker_queues.get(call.tool_id):
        return assessment
    for message in reversed(messages):
        if message.role == "tool" and message.name == call.tool_id and isinstance(message.content, dict):
            metadata = message.content.get("metadata")
            if isinstance(metadata, dict) and (
                known := {k: metadata[k] for k in assessment.context if metadata.get(k)}
            ):
                return assessment.model_copy(update={"context": {**assessment.context, **known}})
    return assessment


def _contextual(
    host: LoopHost,
    call: ToolCallRequest,
    assessment: ToolAssessment,
    messages: list[UniversalMessage],
    state: dict[str, Any] | None,
) -> ToolAssessment:
    """The assessment with its context as people should see it: a tool given its `state` (the
    `terminal-sandbox` patch) said it itself; before, the last result's metadata filled it in."""
    return assessment if state is not None else _with_context(host, call, assessment, messages)


async def _gate_and_run(host: LoopHost, call: ToolCallRequest, messages: list[UniversalMessage]) -> None:
    """Assess one call, get it approved when needed, run it, and append its result or denial.

    An `ask_user` call is a question to the person instead. An approval may edit the call's
    arguments: the edited call is assessed again and, when it is of another kind (another
    command head or reason), asked for again; the agent is told its call was edited.
    """
    if call.tool_id == ASK_USER and workflow.patched(ASK_USER_PATCH):
        await _ask_user(host, call, messages)
        return
    sandboxed = workflow.patched(sandbox.SANDBOX_PATCH)
    state = _tool_state(host, call, messages) if sandboxed else None
    assessment = _contextual(host, call, await _assess(call, state), messages, state)
    if not assessment.known:
        _refuse_unknown(host, call, assessment, messages)
        return
    interaction_id: str | None = None
    edit: dict[str, Any] | None = None
    if assessment.needs_approval:
        if sandboxed:
            assessment = sandbox.proposed(assessment, host.sandbox)
        outcome = await host.ask_approval(call, assessment)
        if not outcome.approved:
            messages.append(_tool_message(call, _denial(outcome), outcome.interaction_id))
            return
        edited = (outcome.response_data or {}).get("arguments")
        if isinstance(edited, dict) and edited != call.arguments and workflow.patched(EDITED_CALLS_PATCH):
            edit = {"edited_by": outcome.decided_by, "original_arguments": call.arguments}
            call = call.model_copy(update={"arguments": edited})
            again = _contextual(host, call, await _assess(call, state), messages, state)
            if sandboxed:
                again = sandbox.proposed(again, host.sandbox)
            if not again.known:
                _refuse_unknown(host, call, again, messages)
                return
            if again.needs_approval and (again.head, again.reason) != (assessment.head, assessment.reason):
                not_yet = f"not run yet: the edited call is of another kind ({again.reason}), so it is asked for again"
                host.tool_finished(
                    outcome.interaction_id, ToolResult(tool_id=call.tool_id, ok=False, error=not_yet)
                )
                outcome = await host.ask_approval(call, again, edit_of=outcome)
                if not outcome.approved:
                    messages.append(
                        _tool_message(call, {**_denial(outcome), "edited": edit}, outcome.interaction_id)
                    )
                    return
            assessment = again
        if sandboxed:
            assessment = sandbox.decided(assessment, outcome)
        interaction_id = outcome.interaction_id
        if not await host.checkpoint():
            host.tool_finished(interaction_id, ToolResult(tool_id=call.tool_id, ok=False, error="cancelled"))
            return
    host.publish(
        TaskChunkType.TOOL_CALL_REQUEST,
        {
            "tool_name": call.tool_id,
            "tool_params": call.arguments,
            "summary": assessment.summary,
            **({"context": assessment.context} if assessment.context else {}),
        },
        metadata={"interaction_id": interaction_id, "requires_approval": assessment.needs_approval},
    )
    binding = assessment.worker_bound
    queue = host.worker_queues.get(call.tool_id) if binding is not None else None
    if queue == LOST:
        host.publish(
            TaskChunkType.PROGRESS,
            {
                "tool_name": call.tool_id,
                "message": f"{call.tool_id}: starting afresh, the last one was lost with its worker",
            },
            metadata={"interaction_id": interaction_id},
        )
    chosen = assessment.sandbox if sandboxed and interaction_id is not None else None
    run = ToolRun(owner_id=host.owner_id, interaction_id=interaction_id, call=call, sandbox=chosen)
    try:
        result = await _run_or_lost(run, assessment, queue)
    except asyncio.CancelledError:
        if interaction_id is not None and workflow.patched(CANCELLED_RUN_ANSWERED_PATCH):
            cancelled = ToolResult(tool_id=call.tool_id, ok=False, error="cancelled while it ran")
            host.tool_finished(interaction_id, cancelled)  # the approver is answered, not left waiting
        raise
    if binding is not None:
        _remember_worker(host, call.tool_id, result)
    host.publish(
        TaskChunkType.TOOL_USE,
        {"tool_name": call.tool_id, "result": result.model_dump(mode="json")},
        metadata={"interaction_id": interaction_id, "ok": result.ok},
    )
    host.tool_finished(interaction_id, result)
    told = result.model_dump(mode="json") | ({"edited": edit} if edit else {})
    messages.append(_tool_message(call, told, interaction_id))


CANCELLED_RUN_ANSWERED_PATCH = "cancelled-run-answers-its-approver"
"""Patch id: a run cancelled with its turn answers the approval that started it."""


async def _run_or_lost(run: ToolRun, assessment: ToolAssessment, queue: str | None) -> ToolResult:
    """The tool's result; a failure, or the loss of the worker holding its state, as a result."""
    try:
        return await _run_tool(run, assessment, queue or None)
    except ActivityError as err:
        _raise_if_cancelled(err)
        binding = assessment.worker_bound
        if binding is not None and (lost := _lost_how(err, queue)) is not None:
            return _worker_lost(run.call, queue, binding, lost)
        return ToolResult(tool_id=run.call.tool_id, ok=False, error=_error_message(err))


WORKER_BOUND_RETRY = RetryPolicy(maximum_attempts=1)
"""A worker-bound run is never retried: another worker would start it again on another host, and
its own worker, once gone, is gone for good."""
LOST = ""
"""In `worker_queues`: the worker that held the tool's state is gone (the next run starts afresh)."""
WORKER_BOUND_PATCH = "worker-bound-tools"
"""Patch id: a tool keeping state in its worker runs there, with a heartbeat timeout."""


def _lost_how(err: ActivityError, queue: str | None) -> str | None:
    """How a worker-bound run lost its worker: `never_started` (nobody took it from the worker's
    queue), `stopped` (its worker stopped heartbeating mid-run), or None (another failure)."""
    cause = err.cause
    if not isinstance(cause, TimeoutError):
        return None
    if cause.type == TimeoutType.SCHEDULE_TO_START and queue:
        return "never_started"
    return "stopped" if cause.type == TimeoutType.HEARTBEAT else None


def _worker_lost(call: ToolCallRequest, queue: str | None, binding: WorkerBinding, how: str) -> ToolResult:
    tool = call.tool_id
    if how == "never_started":
        what = (
            f"the worker holding it did not take this call within {binding.wait_seconds:g} s "
            f"(task queue {queue}), so it has gone; the call did not run"
        )
    else:
        what = (
            f"the worker running this call stopped answering for {binding.heartbeat_seconds:g} s"
            f"{f' (task queue {queue})' if queue else ''}; the call may have been cut short and is not run again"
        )
    return ToolResult(
        tool_id=tool,
        ok=False,
        error=f"{tool} lost: {what}, and the next call starts a fresh {tool}",
        metadata={"worker_lost": True, "worker_queue": queue, "lost": how},
    )


def _remember_worker(host: LoopHost, tool_id: str, result: ToolResult) -> None:
    """Where the tool's state now is: the worker that ran it, or `LOST`."""
    bound = result.metadata.get("worker_queue")
    if result.metadata.get("worker_lost"):
        host.worker_queues[tool_id] = LOST
        host.tool_states.pop(tool_id, None)
    elif isinstance(bound, str) and bound:
        host.worker_queues[tool_id] = bound
        host.tool_states[tool_id] = dict(result.metadata)


async def _run_tool(run: ToolRun, assessment: ToolAssessment, queue: str | None) -> ToolResult:
    """Run the tool: a quick one as a local activity, anything else as a regular activity.

    A worker-bound tool (a terminal) heartbeats while it runs, and once a worker holds its
    state its calls go to that worker's own `queue`: waiting longer than the binding's
    `wait_seconds` there means the worker is gone (`_never_started`).

    Measured on a 2-core machine (bench/): approve → SQL applied → acknowledged took ~80 ms
    with a regular activity (an activity task dispatch plus a second workflow task) against
    ~48 ms for a bare update → activity; as a local activity the tool runs inside the workflow
    task that accepted the approval. A crash mid-run is retried when the workflow task times
    out, and the tool's exactly-once claim keeps a destructive statement from applying twice.
    """
    summary = f"tool {assessment.summary}"
    result: ToolResult
    if assessment.quick and workflow.patched(LOCAL_TOOL_RUN_PATCH):
        result = await workflow.execute_local_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            start_to_close_timeout=QUICK_TOOL_TIMEOUT,
            retry_policy=RUN_TOOL_RETRY,
            summary=summary,
        )
    elif assessment.worker_bound is not None and workflow.patched(WORKER_BOUND_PATCH):
        binding = assessment.worker_bound
        result = await workflow.execute_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            task_queue=queue,
            schedule_to_start_timeout=timedelta(seconds=binding.wait_seconds) if queue else None,
            start_to_close_timeout=RUN_TOOL_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=binding.heartbeat_seconds),
            retry_policy=WORKER_BOUND_RETRY,
            summary=summary,
        )
    else:
        result = await workflow.execute_activity(
            RUN_TOOL,
            run,
            result_type=ToolResult,
            start_to_close_timeout=RUN_TOOL_TIMEOUT,
            retry_policy=RUN_TOOL_RETRY,
            summary=summary,
        )
    return result
