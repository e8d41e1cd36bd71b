"""`DemoChatModel`: the offline demo rules (agents/demo_twin.py) as a LangChain chat model.

It is what `Agent:demo-langgraph` runs, so the LangGraph adapter is exercised end to end with
no network and deterministic answers. A tool call is an `AIMessage` with `tool_calls`; the
rules' reasoning travels as `response_metadata["thought"]`. `bind_tools` stores the tools'
names; the rules still decide the call.
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

from ..demo_twin import DemoModelFailure, demo_reply
from ..fallback import DEMO_MODEL
from .messages import langchain_turns, lc_call

__all__ = ["DEMO_MODEL", "DemoChatModel", "DemoModelFailure"]


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
        reply = demo_reply(langchain_turns(messages), self.tool_names, "Agent:demo-langgraph")
        metadata = {"thought": reply.thought, "model_name": DEMO_MODEL}
        if reply.call is not None:
            return AIMessage(content="", tool_calls=[lc_call(reply.call)], response_metadata=metadata)
        return AIMessage(content=reply.text, response_metadata=metadata)
