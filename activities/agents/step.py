"""The `agent_step` activity: runs one step of the agent named by `AgentStepInput.agent_id`.

Adapters are stateless: the workflow passes the conversation in and gets one `AgentResult`
back. The activity name is part of recorded histories (do not rename it); the agents' logic may
change freely, since recorded results are replayed rather than recomputed.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import (
    ASK_USER,
    AgentIntent,
    AgentResult,
    AgentSpec,
    AgentStepInput,
    AssessRequest,
    ErrorType,
    ExperienceRecord,
    FailureDetails,
    FinalAnswer,
    PlanBlueprint,
    ToolAssessment,
    ToolCallBatch,
    ToolCallRequest,
    ToolDescriptor,
)
from contracts.experience import answer_text, preview
from contracts.names import AGENT_STEP
from core.agent_registry import BUILTIN_AGENTS, UnknownAssignee, declared, load_registry
from core.artifacts import ArtifactStore, preview_text
from core.experience import index_for
from core.nesting import cut_nesting, too_deep
from core.settings import Settings

from ..artifacts.offload import Offloader
from ..heartbeats import heartbeating
from ..tools.registry import builtin_tools
from . import demo
from .context import ContextSources

#: The tool gate's assessment of a call (`ToolActivities.assess_tool_call`), for quick steps.
Assessor = Callable[[AssessRequest], Awaitable[ToolAssessment]]
#: An agent adapter: one step in, one result out.
AgentFn = Callable[[AgentStepInput], Awaitable[AgentResult]]
#: A framework adapter: one step of a declared agent (`step.agent`), with the tool registry.
FrameworkFn = Callable[[AgentStepInput, dict[str, ToolDescriptor]], Awaitable[AgentResult]]


_HEARTBEAT_SECONDS = 1.0
SIDE_WORK_SECONDS = 5.0
"""The longest a step waits for what it does besides deciding (assessing its call, recording the
turn); past it, the workflow does that work itself, as it did before steps did it."""
THOUGHT_CHARS = 4000
"""An agent's reasoning is cut to this before it is recorded and streamed."""


def _question(step: AgentStepInput) -> str:
    """The turn's question when the workflow left it out of `step.remember`: the step's last user
    message (the turn's own: a turn adds no user messages)."""
    asked = next((m.content for m in reversed(step.messages) if m.role == "user"), "")
    return preview(asked if isinstance(asked, str) else answer_text(asked))


async def _demo(step: AgentStepInput) -> AgentResult:
    return demo.decide(step)


async def _demo_framework(step: AgentStepInput, tools: dict[str, ToolDescriptor]) -> AgentResult:
    return demo.decide(step)


def _imported_on_use(module: str, adapter: str) -> FrameworkFn:
    """The adapter function `adapter` of `module`, imported on its first step.

    google.adk, LangGraph with langchain-openai, and AutoGen each take a second or more to
    import: loading them off the event loop, when first used, lets the worker start fast and
    other activities keep heartbeating meanwhile.
    """

    async def run(step: AgentStepInput, tools: dict[str, ToolDescriptor]) -> AgentResult:
        loaded = await asyncio.to_thread(importlib.import_module, module)
        result: AgentResult = await getattr(loaded, adapter)(step, tools)
        return result

    return run


#: Adapters by `AgentSpec.framework`; each module imports its framework lazily.
FRAMEWORKS: dict[str, FrameworkFn] = {
    "demo": _demo_framework,
    "adk": _imported_on_use("activities.agents.adk.agent", "adk_step"),
    "langgraph": _imported_on_use("activities.agents.langgraph.agent", "langgraph_step"),
    "autogen": _imported_on_use("activities.agents.autogen.agent", "autogen_step"),
}


def _sleep_seconds(input_data: dict[str, Any] | None) -> float:
    """`input_data.sleep_seconds` as a number of seconds (0 when absent)."""
    if not input_data or input_data.get("sleep_seconds") is None:
        return 0.0
    value = input_data["sleep_seconds"]
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ApplicationError(
            f"input_data.sleep_seconds must be a non-negative number of seconds, got {value!r}",
            type=ErrorType.INVALID_AGENT_INPUT,
            non_retryable=True,
        )
    return float(value)


async def _sleep_heartbeating(seconds: float) -> None:
    """Wait `seconds`, heartbeating about every second; a retry resumes from the last heartbeat."""
    details = activity.info().heartbeat_details
    done = float(details[0]) if details and isinstance(details[0], int | float) else 0.0
    started = time.monotonic() - done
    while (elapsed := time.monotonic() - started) < seconds:
        await asyncio.sleep(min(_HEARTBEAT_SECONDS, seconds - elapsed))
        activity.heartbeat(time.monotonic() - started)


def _refused(thought: str, message: str) -> AgentResult:
    """A step whose answer is refused by a limit: a failure saying which."""
    return AgentResult(
        status="FAILURE",
        output=AgentIntent(thought=thought, intent=FinalAnswer(content=message)),
        failure_details=FailureDetails(type="VALIDATION_ERROR", message=message),
    )


def _nested_too_deep(intent: ToolCallRequest | ToolCallBatch | PlanBlueprint, limit: int) -> str | None:
    """Why a proposed call or plan cannot be carried (nested deeper than `limit`), or None."""
    if isinstance(intent, PlanBlueprint):
        what = "task graph"
    else:
        what = f"call of {intent.tool_id}" if isinstance(intent, ToolCallRequest) else "tool calls"
    try:
        path = too_deep(intent.model_dump(mode="json"), limit)
    except ValueError:  # deeper than pydantic writes at all
        path = ()
    if path is None:
        return None
    where = f" at {'.'.join(map(str, path))}" if path else ""
    return f"the proposed {what} nests deeper than {limit} levels{where} (SYNAPSE_MAX_JSON_DEPTH)"


class AgentActivities:
    """The agent activities and the registry of agents they can run."""

    def __init__(self, settings: Settings, assess: Assessor | None = None) -> None:
        """Build the registry of agents.

        Args:
            settings: Configuration (configured agents will be read from here).
            assess: How a proposed call is assessed, for steps asked to (`AgentStepInput.assess`);
                without it they leave the assessment to the workflow.
        """
        self._settings = settings
        self._assess = assess
        #: The declarations a session's steps refer to (`AgentStepInput.agent_ref`).
        self.registry = load_registry(settings)
        store = ArtifactStore.from_settings(settings)
        self.context = ContextSources(store, index_for(settings))
        self.offloader = Offloader(store, settings.limits.inline_bytes)
        #: Tools the adapters declare to models (the workflow's `run_tool` runs them).
        self.tools: dict[str, ToolDescriptor] = builtin_tools()
        self.agents: dict[str, AgentFn] = {
            "Agent:demo": _demo,
            "Agent:demo-adk": self._declared(BUILTIN_AGENTS["demo-adk"]),
            "Agent:demo-langgraph": self._declared(BUILTIN_AGENTS["demo-langgraph"]),
            "Agent:demo-autogen": self._declared(BUILTIN_AGENTS["demo-autogen"]),
        }

    def _declared(self, spec: AgentSpec) -> AgentFn:
        """An agent run through its framework adapter as `spec`, for steps without `step.agent`."""

        async def run(step: AgentStepInput) -> AgentResult:
            return await self._run_framework(step.model_copy(update={"agent": spec}))

        return run

    def _by_reference(self, step: AgentStepInput) -> AgentStepInput:
        """`step` with the declaration its `agent_ref` refers to, and its tools as the workflow
        would have listed them; a declaration this worker lacks, or one changed since, is a
        non-retryable `UnknownAgent` that says which (the turn fails with it, nothing waits)."""
        assert step.agent_ref is not None
        try:
            spec = declared(self.registry, step.agent_ref, step.agent_id)
        except UnknownAssignee as err:
            raise ApplicationError(str(err), type=ErrorType.UNKNOWN_AGENT, non_retryable=True) from None
        tools = list(spec.tools) if spec.context.include_tool_list else []
        return step.model_copy(update={"agent": spec, "tools": tools})

    async def _run_framework(self, step: AgentStepInput) -> AgentResult:
        assert step.agent is not None
        adapter = FRAMEWORKS.get(step.agent.framework)
        if adapter is None:
            raise ApplicationError(
                f"agent {step.agent_id!r} uses framework {step.agent.framework!r}, which this worker "
                f"does not run; it runs: {', '.join(sorted(FRAMEWORKS))}",
                type=ErrorType.UNKNOWN_AGENT,
                non_retryable=True,
            )
        return await adapter(step, self.tools)

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.agent_step]

    async def _bounded(self, result: AgentResult, step: AgentStepInput) -> AgentResult:
        """The result within the limits: a long answer offloaded, one nested too deep cut
        (`SYNAPSE_MAX_JSON_DEPTH`), a call or plan nested too deep or an oversized plan refused."""
        output = result.output
        if len(output.thought) > THOUGHT_CHARS:
            output = output.model_copy(update={"thought": preview_text(output.thought, THOUGHT_CHARS)})
        intent = output.intent
        limit = self._settings.limits.max_json_depth
        if isinstance(intent, FinalAnswer) and too_deep(intent.content, limit) is not None:
            intent = FinalAnswer(content=cut_nesting(intent.content, limit), artifact=intent.artifact)
            output = output.model_copy(update={"intent": intent})
        elif not isinstance(intent, FinalAnswer) and (deep := _nested_too_deep(intent, limit)):
            return _refused(output.thought, deep)
        if isinstance(intent, FinalAnswer) and not self.offloader.fits(intent.content):
            preview, ref = await self.offloader.offload(
                intent.content, name=f"{step.agent_id} answer", owner_id=step.owner_id
            )
            output = output.model_copy(update={"intent": FinalAnswer(content=preview, artifact=ref)})
        elif isinstance(intent, PlanBlueprint):
            size = len(intent.model_dump_json().encode())
            if size > self._settings.limits.max_blueprint_bytes:
                return _refused(
                    output.thought,
                    f"the proposed task graph is {size:,} bytes; the limit is "
                    f"{self._settings.limits.max_blueprint_bytes:,} bytes (SYNAPSE_MAX_BLUEPRINT_BYTES)",
                )
        return result if output is result.output else result.model_copy(update={"output": output})

    async def _assessed(self, result: AgentResult, step: AgentStepInput) -> AgentResult:
        """A single call proposed by a step asked to assess it (`step.assess`), with its assessment,
        made as the workflow's `assess_tool_call` would make it next (the gate still decides).

        Any other result carries no assessment (whatever an adapter put there is dropped). An
        assessment that fails leaves none: the gate's own local activity assesses the call, with
        its own retries, as before."""
        call = result.output.intent
        if (
            step.assess is None
            or self._assess is None
            or result.status != "SUCCESS"
            or not isinstance(call, ToolCallRequest)
            or call.tool_id == ASK_USER
        ):
            return result if result.assessment is None else result.model_copy(update={"assessment": None})
        request = AssessRequest(
            call=call, state=step.assess.states.get(call.tool_id, {}), rules=step.assess.rules
        )
        try:
            async with asyncio.timeout(SIDE_WORK_SECONDS):
                assessment = await self._assess(request)
        except Exception as err:
            activity.logger.warning("%s not assessed by its step, the gate will: %r", call.tool_id, err)
            return result.model_copy(update={"assessment": None})
        return result.model_copy(update={"assessment": assessment})

    async def _remembered(self, result: AgentResult, step: AgentStepInput) -> AgentResult:
        """An answer to a turn the step was asked to remember (`step.remember`), recorded in the
        experience index; `remembered` says so. A failure to record leaves it to the workflow,
        whose `index_experience` tries again; a retried step finds the record there already."""
        intent = result.output.intent
        if step.remember is None or result.status != "SUCCESS" or not isinstance(intent, FinalAnswer):
            return result
        record = ExperienceRecord(
            owner_id=step.owner_id,
            turn=step.remember.turn,
            agent_id=step.agent_id,
            asked_by=step.remember.asked_by,
            at=datetime.now(UTC),
            outcome="answer",
            question=step.remember.question or _question(step),
            answer=preview(answer_text(intent.content)),
            project=step.remember.project,
        )
        try:
            async with asyncio.timeout(SIDE_WORK_SECONDS):  # a busy index must not time the step out
                await asyncio.to_thread(self.context.index.record, record)
        except Exception as err:  # recall is a help: the workflow records the turn instead
            activity.logger.warning(
                "turn %s of %s not recorded by its step: %s", record.turn, record.owner_id, err
            )
            return result
        return result.model_copy(update={"remembered": True})

    @activity.defn(name=AGENT_STEP)
    async def agent_step(self, step: AgentStepInput) -> AgentResult:
        """Run one step of `step.agent_id` and return its `AgentResult`.

        A step with `step.agent` (the declaration resolved when the work was submitted) runs
        through the adapter of `step.agent.framework` (`FRAMEWORKS`); one with `step.agent_ref`
        (a session's) runs the declaration of this worker's registry it refers to, if unchanged;
        a step with neither (older histories) runs the builtin agent registered under
        `step.agent_id`.

        `input_data.sleep_seconds` makes the step wait that long first, heartbeating, so tests
        can exercise timeouts, cancellation and worker restarts.

        Args:
            step: The agent id, conversation and task inputs.

        Returns:
            The agent's one result (a failure is a `FAILURE` result, not an exception).

        Raises:
            ApplicationError: `UnknownAgent` or `InvalidAgentInput`, both non-retryable;
                `ModelUnavailable` (retryable) when a model call failed transiently.
        """
        if not step.owner_id:  # the workflow that scheduled it (a session's steps leave it out)
            step = step.model_copy(update={"owner_id": activity.info().workflow_id})
        if step.agent is None and step.agent_ref is not None:
            step = self._by_reference(step)
        agent = self._run_framework if step.agent is not None else self.agents.get(step.agent_id)
        if agent is None:
            known = ", ".join(sorted(self.agents))
            raise ApplicationError(
                f"no agent named {step.agent_id!r}; known agents: {known}",
                type=ErrorType.UNKNOWN_AGENT,
                non_retryable=True,
            )
        seconds = _sleep_seconds(step.input_data)
        if seconds:
            activity.logger.info("%s sleeps %.1fs as input_data.sleep_seconds asks", step.agent_id, seconds)
            await _sleep_heartbeating(seconds)
        async with heartbeating():  # a worker gone mid-step: retried after AGENT_STEP_HEARTBEAT
            result = await self._bounded(await agent(await self.context.enrich(step)), step)
            result = await self._remembered(await self._assessed(result, step), step)
        activity.logger.info(
            "%s step for %s: %s %s",
            step.agent_id,
            step.owner_id,
            result.status,
            type(result.output.intent).__name__,
        )
        return result
