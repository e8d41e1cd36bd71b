"""One agent step with google-adk: an `LlmAgent` run by a `Runner`, stopped at its first decision.

Why `LlmAgent` + `Runner` and not the model layer alone: ADK then builds the request exactly as
it does in production (instruction, tool declarations, history, function-call ids), so an
agent declared with `framework = "adk"` behaves as that agent would in ADK, and the same code
drives Gemini, an OpenAI-compatible endpoint or the offline demo model (adk_models).

Stateless: each step creates an `InMemorySessionService` session, replays the conversation the
workflow passed in as events (user text, model function calls with their ids, function
responses for tool results and denials), sends the latest user content as the new message and
reads events until the first decision. ADK yields the model's function-call event *before* it
would execute tools; we close the run there, so tools are declared to the model but never run
here (`DeclaredTool.run_async` raises if ADK ever tried). The workflow gates and runs them.

Proposed calls are validated (known tool, arguments match its JSON schema); a bad call is
answered once with an error function response and the model asked again. Model failures are
classified by `model_errors`; `spec.fallback_models` are tried in order.
"""

from __future__ import annotations

import json
import logging
import re
from contextlib import aclosing
from typing import Any, cast, get_args

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.genai import types
from pydantic import ValidationError

from contracts import (
    AgentIntent,
    AgentResult,
    AgentSpec,
    AgentStepInput,
    FailureDetails,
    FailureType,
    FinalAnswer,
    PlanBlueprint,
    ToolCallBatch,
    ToolCallRequest,
    ToolDescriptor,
)
from core.agent_registry import BUILTIN_AGENTS

from ...tools.registry import declared_tools
from ..fallback import ModelFailed, across_models
from ..model_errors import (
    model_failure,
)
from .history import conversation_contents
from .models import ModelChoice, select_model
from .openai_compat import CALL_FAILED, MALFORMED_ARGUMENTS, OpenAICompatLlm
from .tools import DeclaredTool, call_problem

logger = logging.getLogger(__name__)

APP_NAME = "synapse"
_USER_ID = "synapse"
_REFUSALS = {"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"}


def _agent_name(name: str) -> str:
    cleaned = re.sub(r"\W", "_", name).strip("_") or "agent"
    return cleaned if cleaned[0].isalpha() and cleaned != "user" else f"agent_{cleaned}"


def _as_plan(text: str) -> PlanBlueprint | None:
    """A plan when the answer is `plan: {json}` or a JSON object that is a PlanBlueprint with tasks."""
    body = text.strip()
    body = body[len("plan:") :].strip() if body.lower().startswith("plan:") else body
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", body)
    if not body.startswith("{"):
        return None
    try:
        plan = PlanBlueprint.model_validate_json(body)
    except ValidationError:
        return None
    return plan if plan.new_tasks or plan.update_tasks else None


def _texts(event: Event, thought: bool) -> str:
    parts = event.content.parts if event.content else None
    return "\n".join(p.text for p in parts or [] if p.text and bool(p.thought) == thought).strip()


def _usage(event: Event) -> dict[str, Any] | None:
    usage = event.usage_metadata
    if usage is None:
        return None
    counts = {
        "prompt_tokens": usage.prompt_token_count,
        "completion_tokens": usage.candidates_token_count,
        "total_tokens": usage.total_token_count,
    }
    return {key: value for key, value in counts.items() if value is not None}


async def _decide(
    choice: ModelChoice, spec: AgentSpec, declared: list[BaseTool], contents: list[types.Content]
) -> Event | None:
    """Run the agent on `contents` in a fresh session: the first event with calls, the answer, the
    error event, or None when the model said nothing."""
    instruction = spec.instruction
    agent = LlmAgent(
        name=_agent_name(spec.name),
        model=choice.llm,
        instruction=lambda _context: instruction,  # a provider, so `{...}` is not templated
        tools=list(declared),
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP_NAME, agent=agent, session_service=sessions)
    session = await sessions.create_session(app_name=APP_NAME, user_id=_USER_ID)
    *history, latest = contents
    if latest.role != "user":
        history, latest = contents, types.Content(role="user", parts=[types.Part(text="Continue.")])
    for content in history:
        author = "user" if content.role == "user" else agent.name
        await sessions.append_event(session, Event(author=author, invocation_id="history", content=content))
    answer: Event | None = None
    failed: Event | None = None
    async with aclosing(
        runner.run_async(user_id=_USER_ID, session_id=session.id, new_message=latest)
    ) as events:
        async for event in events:
            if event.error_code:
                failed = event  # an exception may follow; it is more precise
            elif event.get_function_calls():
                return event
            elif event.content and event.content.parts and not event.partial:
                answer = event
    return failed or answer


def _event_failure(event: Event, choice: ModelChoice, model: str) -> ModelFailed:
    """The failure an `error_code` event stands for."""
    if event.error_code == CALL_FAILED and isinstance(choice.llm, OpenAICompatLlm) and choice.llm.last_error:
        err = choice.llm.last_error
        return ModelFailed.of(err, model=model, secrets=choice.secrets)
    code = event.error_code or "MODEL_ERROR"
    if code in get_args(FailureType):  # the demo model's FAILURE results, as they are
        kind = cast(FailureType, code)
        message = event.error_message or f"model {model!r} failed with {code}"
    else:
        kind = "LLM_REFUSAL" if code in _REFUSALS else "MODEL_ERROR"
        message = f"model {model!r} stopped ({code})" + (
            f": {event.error_message}" if event.error_message else ""
        )
    return ModelFailed(message, FailureDetails(type=kind, message=message), None)


async def _attempt(
    step: AgentStepInput, spec: AgentSpec, model: str, allowed: dict[str, ToolDescriptor]
) -> AgentResult:
    """One model: decide, validate proposed calls (re-asking once), and build the result."""
    choice = select_model(model, spec)
    declared: list[BaseTool] = (
        [DeclaredTool(d) for d in allowed.values()] if spec.context.include_tool_list else []
    )
    contents = conversation_contents(step.messages, step.input_data)
    metadata: dict[str, Any] = {}  # across_models adds the framework and the model
    for asked in range(2):
        try:
            event = await _decide(choice, spec, declared, contents)
        except ModelFailed:
            raise
        except Exception as err:  # provider SDK errors (e.g. Gemini) propagate through ADK
            raise ModelFailed.of(err, model=model, secrets=choice.secrets) from err
        if event is None:
            message = f"model {model!r} returned an empty answer"
            raise ModelFailed(message, FailureDetails(type="MODEL_ERROR", message=message), None)
        if event.error_code:
            raise _event_failure(event, choice, model)
        if usage := _usage(event):
            metadata["usage"] = usage
        calls = event.get_function_calls()
        thought = _texts(event, thought=True) or _texts(event, thought=False)
        if not calls:
            text = _texts(event, thought=False)
            if not text:
                message = f"model {model!r} returned an empty answer"
                raise ModelFailed(message, FailureDetails(type="MODEL_ERROR", message=message), None)
            return _answer(step, text, thought, metadata)
        malformed = (event.custom_metadata or {}).get(MALFORMED_ARGUMENTS) or {}
        problems = {call.id: p for call in calls if (p := call_problem(call, allowed, malformed))}
        if not problems:
            requests = [
                ToolCallRequest(tool_id=c.name or "", arguments=dict(c.args or {}), call_id=c.id)
                for c in calls
            ]
            intent = requests[0] if len(requests) == 1 else ToolCallBatch(calls=requests)
            thought = thought or f"I call {', '.join(r.tool_id for r in requests)}."
            return AgentResult(
                status="SUCCESS", output=AgentIntent(thought=thought, intent=intent), metadata=metadata
            )
        if asked == 0:
            # Problems may quote the call's arguments: DEBUG only, INFO carries no user text (issue 47).
            logger.debug("agent %s: bad tool calls: %s", spec.name, problems)
            logger.info(
                "agent %s: model %s proposed %d bad tool call(s), asking again",
                spec.name,
                model,
                len(problems),
            )
            metadata["reasked"] = list(problems.values())
            skipped = "not run: another call in this turn was malformed; propose your calls again"
            responses = [
                types.Part(
                    function_response=types.FunctionResponse(
                        id=c.id, name=c.name, response={"error": problems.get(c.id, skipped)}
                    )
                )
                for c in calls
            ]
            assert event.content is not None
            contents = [*contents, event.content, types.Content(role="user", parts=responses)]
    message = f"model {model!r} proposed malformed tool calls twice: " + "; ".join(problems.values())
    return model_failure(
        FailureDetails(type="VALIDATION_ERROR", message=message), thought=thought or None, metadata=metadata
    )


def _answer(step: AgentStepInput, text: str, thought: str, metadata: dict[str, Any]) -> AgentResult:
    plan = _as_plan(text)
    if plan is not None:
        names = ", ".join(task.task_id for task in plan.new_tasks) or "task updates"
        intent: FinalAnswer | PlanBlueprint = plan
        thought = thought or f"I propose a plan ({names})."
    else:
        content: Any = text
        if step.input_data is not None and text.startswith(("{", "[")):
            try:  # a graph task's JSON answer stays structured, for data flow into later tasks
                content = json.loads(text)
            except json.JSONDecodeError:
                pass
        intent = FinalAnswer(content=content)
    result_thought = thought if thought and thought != text else "The model answered."
    return AgentResult(
        status="SUCCESS", output=AgentIntent(thought=result_thought, intent=intent), metadata=metadata
    )


async def adk_step(step: AgentStepInput, tools: dict[str, ToolDescriptor]) -> AgentResult:
    """Run one step of an ADK agent: its next tool call(s), plan or answer.

    Args:
        step: The conversation and task inputs; `step.agent` is the agent's declaration (a
            demo-model ADK agent when unset).
        tools: The tool registry; the agent may call those of `spec.tools` found here.

    Returns:
        A `ToolCallRequest` (one call, with the model's `call_id`), a `ToolCallBatch` (several,
        in the model's order), a `PlanBlueprint` or a `FinalAnswer`; a `FAILURE` result for a
        permanent model failure or tool calls still malformed after one correction.

    Raises:
        ApplicationError: `ModelUnavailable` (retryable) when every model failed and at least
            one failure was transient (rate limit, 5xx, timeout, connection).
    """
    spec = step.agent or BUILTIN_AGENTS["demo-adk"]
    allowed = declared_tools(spec.tools if step.agent else step.tools, tools)
    return await across_models(spec, "adk", lambda model: _attempt(step, spec, model, allowed))
