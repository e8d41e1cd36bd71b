"""`ask_user`: the agent asks the person a question and waits for the answer.

The workflow answers this call itself (a USER_INPUT interaction, `workflows/supervision`), so
`run_tool` never runs it; the plugin exists to declare the tool to every agent and to put an
answer into words. The answer goes back to the agent as a tool result whose `content` is
`{"question", "answer", "answered_by"}`, or as a denial when nobody answered.
"""

from __future__ import annotations

from typing import Any, Self

from contracts import ASK_USER, ToolCallRequest, ToolDescriptor, ToolResult, ToolRun
from core.settings import Settings

from ..plugin import Tool, cut, one_line

DESCRIPTOR = ToolDescriptor(
    name=ASK_USER,
    description=(
        "Ask the person you are working for a question and wait for the answer (e.g. a missing "
        "detail or a choice). Use it instead of guessing."
    ),
    arguments_schema={
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question, in one or two sentences."}
        },
        "required": ["question"],
    },
    permissions=[],
    source="builtin",
    approval="never",
    allow_grants=False,
)


class AskUserTool(Tool):
    """Declares `ask_user` and describes its answers; the workflow asks, not this class."""

    DESCRIPTOR = DESCRIPTOR

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """Nothing to configure."""
        return cls()

    def summarize(self, call: ToolCallRequest) -> str:
        """`ask_user: Which table?`."""
        question = call.arguments.get("question")
        return one_line(f"ask_user: {question}") if isinstance(question, str) else super().summarize(call)

    async def run(self, run: ToolRun) -> ToolResult:
        """Never the way a question is answered: the workflow asks the person."""
        return ToolResult(
            tool_id=ASK_USER, ok=False, error="ask_user is answered by a person in the session, not run"
        )

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """`bob answered "Which table?": orders`."""
        if not isinstance(content, dict) or "answer" not in content:
            return None
        who = content.get("answered_by") or "the user"
        return f'{who} answered "{cut(str(content.get("question", "")), 200)}": {cut(str(content["answer"]), 1500)}'
