"""The LangGraph adapter: one agent step as a LangGraph graph; tools are gated by the workflow.

Stateless: the workflow's history is the only state. Each step rebuilds the conversation from
`step.messages` (langchain_messages.py), runs the graph of langgraph_graph.py (`model ⇄ tools`
with a re-ask for invalid calls) and returns ONE `AgentResult`: the model's answer (or
`plan: {json}` as a `PlanBlueprint`), or the calls it proposed as a `ToolCallRequest` /
`ToolCallBatch` carrying the model's `call_id`s. No tool ever runs here: the workflow assesses,
gets approval for and runs each call (`run_tool`), and the next step sees the results and
denials as `ToolMessage`s answering those ids.

**Why `interrupt_before=["tools"]` (with a `MemorySaver` per call) rather than routing to END:**
the interrupt is LangGraph's own human-in-the-loop gate, so the graph keeps the standard agent
shape, and "stopped before `tools`" (the checkpoint's `next`) says precisely that the model
proposed valid calls; the `tools` node marks where the workflow takes over and refuses to run.
The checkpointer lives for one activity call: nothing survives it, and the next step
"resumes" from the workflow's history rather than from a checkpoint.

Models: `demo` is `DemoChatModel` (the offline rules); any other name is `ChatOpenAI` against
`spec.base_url` (any OpenAI-compatible endpoint: vLLM, Ollama, LiteLLM, OpenAI), its key read
from the env var `spec.api_key_env` ("EMPTY" when unset), provider retries off so that
Temporal's retry policy is the only backoff. Gemini through LangGraph is out of scope (Gemini
runs through the ADK adapter): a Gemini model without `base_url` is a `VALIDATION_ERROR`.
`spec.fallback_models` are tried in order when a model call fails; errors are mapped by
model_errors.py. LangChain/LangGraph are imported only by activities, never by workflows.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from contracts import (
    AgentResult,
    AgentSpec,
    AgentStepInput,
    FailureDetails,
    ToolCallRequest,
    ToolDescriptor,
)
from core.agent_registry import BUILTIN_AGENTS

from ...tools.registry import declared_tools
from ..answers import calls_result, final_result
from ..fallback import ModelFailed, across_models
from ..model_errors import ENDPOINT_ERRORS, model_failure
from ..proposed import invalid_twice
from .demo_model import DEMO_MODEL, DemoChatModel, DemoModelFailure
from .graph import UnreadableReply, build_graph, call_problems, tool_schemas
from .messages import to_langchain

MODEL_TIMEOUT_SECONDS = 120.0
"""One model call; a step makes at most two per model (a re-ask), well inside AGENT_STEP_TIMEOUT."""
DEFAULT_SPEC = BUILTIN_AGENTS["demo-langgraph"]
"""The agent run when a step carries no declaration (histories from before declarations)."""
_USAGE_KEYS = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
}


def _is_gemini(model: str) -> bool:
    return model.lower().split("/")[-1].startswith("gemini")


def chat_model(spec: AgentSpec, model: str) -> tuple[BaseChatModel | None, FailureDetails | None, str]:
    """(the chat model for `model`, or why there is none, and the API key to keep out of messages)."""
    if model == DEMO_MODEL:
        return DemoChatModel(), None, ""
    if spec.base_url is None and _is_gemini(model):
        message = (
            f"agent {spec.name!r} (framework langgraph) names the Gemini model {model!r} without a "
            'base_url; run Gemini with framework = "adk", or give an OpenAI-compatible base_url'
        )
        return None, FailureDetails(type="VALIDATION_ERROR", message=message), ""
    key = "EMPTY"
    if spec.api_key_env:
        key = os.environ.get(spec.api_key_env, "")
        if not key:
            message = (
                f"agent {spec.name!r}: the env var {spec.api_key_env} (api_key_env) is not set on the worker"
            )
            return None, FailureDetails(type="AUTHENTICATION_FAILED", message=message), ""
    llm = ChatOpenAI(
        model=model,
        base_url=spec.base_url,
        api_key=SecretStr(key),
        max_retries=0,
        timeout=MODEL_TIMEOUT_SECONDS,
    )
    return llm, None, key


def _usage(messages: list[BaseMessage]) -> dict[str, int]:
    """Token counts of this step's model calls, named as the ADK adapter names them."""
    usage: dict[str, int] = {}
    for message in messages:
        counts = getattr(message, "usage_metadata", None) or {}
        for ours, theirs in _USAGE_KEYS.items():
            if isinstance(counts.get(theirs), int):
                usage[ours] = usage.get(ours, 0) + counts[theirs]
    return usage


def _result(
    step: AgentStepInput, tools: dict[str, ToolDescriptor], values: dict[str, Any], gated: bool
) -> AgentResult:
    """The `AgentResult` for the graph's final state (`gated`: it stopped before `tools`)."""
    messages: list[BaseMessage] = values["messages"]
    last = messages[-1]
    assert isinstance(last, AIMessage)
    text = last.text.strip()
    thought = str(last.response_metadata.get("thought") or "")
    if gated:
        calls = [
            ToolCallRequest(tool_id=c["name"], arguments=c["args"], call_id=c.get("id"))
            for c in last.tool_calls
        ]
        return calls_result(calls, thought or text)
    if last.tool_calls or last.invalid_tool_calls:
        return invalid_twice(list(call_problems(last, tools).values()), thought)
    return final_result(step, text, thought)


async def _run(
    step: AgentStepInput, spec: AgentSpec, model: BaseChatModel, tools: dict[str, ToolDescriptor]
) -> AgentResult:
    bound: Any = model
    if spec.context.include_tool_list and tools:
        bound = model.bind_tools(tool_schemas(tools))
    graph = build_graph(bound, tools)
    messages = to_langchain(step.messages, instruction=spec.instruction, input_data=step.input_data)
    config: Any = {"configurable": {"thread_id": step.owner_id}}
    try:
        await graph.ainvoke({"messages": messages, "reasked": []}, config)
    except UnreadableReply as err:
        return model_failure(FailureDetails(type="VALIDATION_ERROR", message=str(err)))
    snapshot = await graph.aget_state(config)
    result = _result(step, tools, snapshot.values, snapshot.next == ("tools",))
    new = snapshot.values["messages"][len(messages) :]
    usage = _usage(new)
    metadata: dict[str, Any] = {"usage": usage} if usage else {}
    if snapshot.values["reasked"]:
        metadata["reasked"] = snapshot.values["reasked"]
    result.metadata = metadata
    return result


async def langgraph_step(step: AgentStepInput, tools: dict[str, ToolDescriptor]) -> AgentResult:
    """Run one step of a LangGraph agent: the model answers, or proposes calls the workflow gates.

    Stateless: the conversation comes from `step.messages` (the workflow's history) and the
    proposed calls go back as `ToolCallRequest`/`ToolCallBatch` with the model's `call_id`s;
    no tool runs here. Changing this adapter changes what new steps return; recorded steps are
    replayed from history, so no workflow versioning is needed.

    Args:
        step: The conversation, task inputs and the agent's declaration (`step.agent`;
            `DEFAULT_SPEC` when absent).
        tools: The tool registry; the agent may call those of `spec.tools` found here
            (`step.tools` for a step without a declaration), declared to the model unless
            `spec.context.include_tool_list` is false.

    Returns:
        A `SUCCESS` result (answer, plan, one call or a batch), or a `FAILURE`
        (`AUTHENTICATION_FAILED`, `QUOTA_EXCEEDED`, `VALIDATION_ERROR`, `MODEL_ERROR`, or the
        demo rules' own failure); `metadata` names the framework and the model used, and
        has `usage`, `reasked` (why the model was asked again) and `failed_models` when known.

    Raises:
        ApplicationError: `ModelUnavailable` (retryable) when every model failed and at least
            one failure was transient (rate limit, 5xx, timeout, connection refused).
    """
    spec = step.agent or DEFAULT_SPEC
    allowed = declared_tools(spec.tools if step.agent else step.tools, tools)

    async def attempt(name: str) -> AgentResult:
        model, failure, key = chat_model(spec, name)
        if model is None:
            assert failure is not None
            raise ModelFailed(failure.message, failure, None)
        try:
            return await _run(step, spec, model, allowed)
        except DemoModelFailure as err:
            return model_failure(err.details, thought=err.thought)
        except ENDPOINT_ERRORS as err:
            raise ModelFailed.of(err, model=name, secrets=[key]) from err

    return await across_models(spec, "langgraph", attempt)
