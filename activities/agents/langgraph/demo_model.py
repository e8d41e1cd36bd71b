"""`DemoChatModel`: the offline demo rules (activities/demo.py) as a LangChain chat model.

It is what `Agent:demo-langgraph` runs, so the LangGraph adapter is exercised end to end with
no network and deterministic answers. From the LangChain messages it rebuilds the workflow's
conversation (`langchain_messages.from_langchain`), applies `demo.decide`, and answers:

* a tool call → an `AIMessage` with `tool_calls` (ids `demo_<n>`, numbered by how many AI
  messages precede it, so the same conversation always gets the same ids);
* a plan → text `plan: {json}`, which the adapter turns into a `PlanBlueprint`;
* an answer → its text (a JSON value is sent as JSON text);
* a `FAILURE` (`input_data.fail`) → raises `DemoModelFailure` with the rules' details.

The rules' reasoning travels as `response_metadata["thought"]`. `bind_tools` stores the tools'
names; the rules still decide the call, and a tool the agent may not use is refused just as
`Agent:demo` refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from contracts import AgentStepInput, FailureDetails, FinalAnswer, PlanBlueprint, ToolCallRequest

from .. import demo
from .messages import PLAN_PREFIX, from_langchain, json_text

DEMO_MODEL = "demo"
"""`AgentSpec.model` value that selects this model."""


class DemoModelFailure(Exception):
    """The demo rules returned a `FAILURE` (e.g. `input_data.fail`); carries their details."""

    def __init__(self, details: FailureDetails, thought: str) -> None:
        super().__init__(details.message)
        self.details = details
        self.thought = thought


class DemoChatModel(BaseChatModel):
    """The demo rules behind LangChain's chat-model interface (deterministic, offline)."""

    tool_names: list[str] = Field(default_factory=list, description="Names of the bound tools.")

    @property
    def _llm_type(self) -> str:
        return "synapse-demo"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """A copy of the model that knows the tools' names (the rules pick the call)."""
        names = [convert_to_openai_tool(tool)["function"]["name"] for tool in tools]
        return self.model_copy(update={"tool_names": names})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.answer(messages))])

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """The rules' answer to `messages` as an `AIMessage`.

        Raises:
            DemoModelFailure: The rules returned a `FAILURE`.
        """
        conversation, input_data = from_langchain(messages)
        step = AgentStepInput(
            agent_id="Agent:demo-langgraph",
            owner_id="langchain",
            messages=conversation,
            tools=self.tool_names,
            input_data=input_data,
        )
        result = demo.decide(step)
        thought = result.output.thought
        if result.status == "FAILURE":
            details = result.failure_details or FailureDetails(type="LLM_REFUSAL", message=thought)
            raise DemoModelFailure(details, thought)
        metadata = {"thought": thought, "model_name": DEMO_MODEL}
        intent = result.output.intent
        if isinstance(intent, ToolCallRequest):
            number = sum(isinstance(message, AIMessage) for message in messages)
            call = {
                "id": f"demo_{number}",
                "name": intent.tool_id,
                "args": intent.arguments,
                "type": "tool_call",
            }
            return AIMessage(content="", tool_calls=[call], response_metadata=metadata)
        if isinstance(intent, PlanBlueprint):
            plan = intent.model_dump_json(exclude_defaults=True)
            return AIMessage(content=f"{PLAN_PREFIX} {plan}", response_metadata=metadata)
        content = intent.content if isinstance(intent, FinalAnswer) else None
        return AIMessage(content=json_text(content), response_metadata=metadata)
