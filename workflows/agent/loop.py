"""The agent loop shared by sessions and graph tasks.

One turn: ask the agent (`agent_step`: an activity, or a local activity for a quick agent) what it wants; a `FinalAnswer` ends the
turn, a `PlanBlueprint` is handed to the caller, a `ToolCallRequest` (or a batch of them) goes
through the tool gate (`gate`: assessed, approved by a person when needed, run) and its result,
or the denial, goes back to the agent. Repeats until an answer, bounded by `max_turns`.

Determinism: every decision here comes from activity results, host state or
`workflow.now()`. Changing the order or kind of commands issued here (activities, timers)
breaks replay of running workflows: gate such a change (`workflows/versioning`).
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import (
        AgentRef,
        AgentResult,
        AgentSpec,
        AgentStepInput,
        FailureDetails,
        FinalAnswer,
        PlanBlueprint,
        StepAssessment,
        Thinking,
        ToolCallBatch,
        TurnToRemember,
        UniversalMessage,
    )
    from contracts.experience import preview
    from contracts.names import AGENT_STEP

from .gate import Assessed, gate_and_run, step_assessment
from .host import LoopHost, LoopOutcome
from .options import (
    AGENT_STEP_HEARTBEAT,
    AGENT_STEP_RETRY,
    AGENT_STEP_TIMEOUT,
    QUICK_BUILTIN,
    QUICK_FRAMEWORKS,
    QUICK_STEP_TIMEOUT,
)
from .replies import error_message, raise_if_cancelled

Declared = AgentSpec | AgentRef
"""An agent's declaration: by value (graph tasks, older sessions) or by reference (sessions)."""


def _last_n(agent: Declared | None) -> Any:
    if isinstance(agent, AgentRef):
        return agent.last_n
    history = agent.context.conversation_history_config if agent else None
    return history.get("last_n") if history else None


def context_messages(messages: list[UniversalMessage], agent: Declared | None) -> list[UniversalMessage]:
    """The conversation the agent is shown: all of it, or the last `last_n` messages.

    A cut never separates tool results from the assistant message that asked for them.
    """
    last_n = _last_n(agent)
    if not isinstance(last_n, int) or last_n <= 0 or last_n >= len(messages):
        return messages
    start = len(messages) - last_n
    while start > 0 and messages[start].role == "tool":
        start -= 1
    return messages[start:]


SEEN_METADATA = frozenset({"artifacts"})
"""What the step reads of a message's metadata (attached artifacts, `activities/agents/context.py`)."""


def as_seen(message: UniversalMessage) -> UniversalMessage:
    """A message as the agent's step reads it: without when it was said and the channel's ids (no
    adapter reads them), which the session keeps in its own conversation."""
    metadata = {k: v for k, v in message.metadata.items() if k in SEEN_METADATA}
    if message.timestamp is None and len(metadata) == len(message.metadata):
        return message
    return message.model_copy(update={"timestamp": None, "metadata": metadata})


def _asked_in(shown: list[UniversalMessage], remember: TurnToRemember | None) -> TurnToRemember | None:
    """`remember` without its question when the step shows the message that asked it (the last
    user message): the step reads it there, and the history does not carry it twice."""
    if remember is None or remember.question is None:
        return remember
    asked = next((m.content for m in reversed(shown) if m.role == "user"), None)
    if not isinstance(asked, str) or preview(asked) != remember.question:
        return remember
    return remember.model_copy(update={"question": None})


def step_input(
    host: LoopHost,
    agent_id: str,
    agent: Declared | None,
    messages: list[UniversalMessage],
    input_data: dict[str, Any] | None,
    remember: TurnToRemember | None = None,
) -> AgentStepInput:
    """Everything the agent may see, built here so the Web UI shows it as the activity's input;
    with `remember`, the turn an answering step records in the experience index. A declaration
    by reference goes as it is: the worker reads the declaration and its tools itself. The
    messages go as the step reads them (`as_seen`)."""
    shown = [as_seen(message) for message in context_messages(messages, agent)]
    ref = agent if isinstance(agent, AgentRef) else None
    spec = agent if isinstance(agent, AgentSpec) else None
    return AgentStepInput(
        agent_id=agent_id,
        owner_id="" if ref else host.owner_id,  # by reference: the worker reads the workflow's id
        messages=shown,
        tools=list(spec.tools) if spec and spec.context.include_tool_list else [],
        input_data=input_data,
        agent=spec,
        agent_ref=ref,
        remember=_asked_in(shown, remember),
    )


def quick_step(step: AgentStepInput) -> bool:
    """Whether the step is quick enough to run as a local activity: its agent decides in the worker
    (`QUICK_FRAMEWORKS`) and is not asked to wait first (`input_data.sleep_seconds`, for tests)."""
    waits = bool(step.input_data and step.input_data.get("sleep_seconds"))
    declared = step.agent or step.agent_ref
    if declared is None:  # the builtin agent of that name (`AgentActivities.agents`)
        return step.agent_id == QUICK_BUILTIN and not waits
    return declared.framework in QUICK_FRAMEWORKS and not waits


async def take_step(
    step: AgentStepInput,
    *,
    after_a_request: bool,
    assess: StepAssessment | None = None,
    watched: bool = False,
) -> tuple[AgentResult, Assessed | None]:
    """Run one agent step: a local activity when quick, else an activity.

    A step right after a request to a person (`after_a_request`) is an activity even when quick:
    the answer to an approver's update leaves with the workflow task, which a local activity
    would hold open until the step is done (approve → applied would wait for the agent). So is a
    quick step while someone follows the stream (`watched`): the workflow task ends as it is
    scheduled, and what was published before it (the turn's start) reaches the watchers before
    the step runs (one workflow task more, for a watched turn only). A quick step is given
    `assess`: the call it proposes comes assessed, and only such a step's assessment is returned
    (the gate takes none it did not ask for)."""
    summary = f"agent {step.agent_id}"
    quick = not after_a_request and quick_step(step)
    if quick and assess is not None:
        step = step.model_copy(update={"assess": assess})
    if quick and not watched:
        result: AgentResult = await workflow.execute_local_activity(
            AGENT_STEP,
            step,
            result_type=AgentResult,
            start_to_close_timeout=QUICK_STEP_TIMEOUT,
            retry_policy=AGENT_STEP_RETRY,
            summary=summary,
        )
    else:
        result = await workflow.execute_activity(
            AGENT_STEP,
            step,
            result_type=AgentResult,
            start_to_close_timeout=AGENT_STEP_TIMEOUT,
            heartbeat_timeout=AGENT_STEP_HEARTBEAT,
            retry_policy=AGENT_STEP_RETRY,
            summary=summary,
        )
    return result, Assessed.of(result, assess) if quick else None


async def run_agent_loop(
    host: LoopHost,
    *,
    agent_id: str,
    messages: list[UniversalMessage],
    input_data: dict[str, Any] | None = None,
    max_turns: int,
    agent: Declared | None = None,
    remember: TurnToRemember | None = None,
    watched: bool = False,
) -> LoopOutcome:
    """Run the agent until it answers; `messages` is extended in place with the exchange.

    With `remember`, the step that answers records the turn in the experience index itself
    (`LoopOutcome.remembered` says whether it did). `watched`: someone follows the stream, so the
    first step lets what was published before it out first (`take_step`)."""
    asked = host.asked
    for count in range(max_turns):
        if not await host.checkpoint():
            return LoopOutcome("cancelled")
        step = step_input(host, agent_id, agent, messages, input_data, remember)
        after_a_request, asked = host.asked != asked, host.asked
        try:
            result, assessed = await take_step(
                step,
                after_a_request=after_a_request,
                assess=step_assessment(host),
                watched=watched and count == 0,
            )
        except (ActivityError, ApplicationError) as err:  # a quick step's failure comes unwrapped
            if isinstance(err, ActivityError):
                raise_if_cancelled(err)
            details = FailureDetails(type="RESOURCE_UNAVAILABLE", message=error_message(err))
            return LoopOutcome("failure", failure=details)
        if result.output.thought:
            host.publish(Thinking(text=result.output.thought))
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
            return LoopOutcome(
                "answer", answer=intent.content, artifact=intent.artifact, remembered=result.remembered
            )
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
            calls = [call.model_dump(mode="json", exclude_none=True) for call in intent.calls]
            messages.append(
                UniversalMessage(role="assistant", content={"tool_calls": calls}, timestamp=workflow.now())
            )
            for call in intent.calls:
                if not await host.checkpoint():
                    return LoopOutcome("cancelled")
                await gate_and_run(host, call, messages)
            continue
        messages.append(
            UniversalMessage(
                role="assistant",
                content={"tool_call": intent.model_dump(mode="json", exclude_none=True)},
                timestamp=workflow.now(),
            )
        )
        await gate_and_run(host, intent, messages, assessed=assessed)
    return LoopOutcome("max_turns")
