"""The agent's questions: an `ask_user` call asks the person (through the host) and the agent
gets the answer, or why there is none."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Answer,
        ToolCallRequest,
        ToolRefused,
        ToolResult,
        UniversalMessage,
    )

from ..supervision.decisions import said_of
from .host import LoopHost
from .replies import denial, result_told, tool_message


async def ask_question(host: LoopHost, call: ToolCallRequest, messages: list[UniversalMessage]) -> None:
    """The agent's question: ask the person, and give the agent the answer (or why there is none)."""
    question = call.arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        result = ToolResult(
            tool_id=call.tool_id,
            ok=False,
            error="ask_user needs `question`: the question, as a non-empty string",
        )
        host.publish(ToolRefused(tool_name=call.tool_id, error=result.error or ""))
        messages.append(tool_message(call, result_told(result), None))
        return
    outcome = await host.ask_user(call)
    if outcome.approved:
        said = said_of(outcome)
        answer = said.text if isinstance(said, Answer) else None
        result = ToolResult(
            tool_id=call.tool_id,
            ok=True,
            content={"question": question.strip(), "answer": answer, "answered_by": outcome.decided_by},
            said=f"answered by {outcome.decided_by}",
        )
        host.tool_finished(outcome.interaction_id, result)
        messages.append(tool_message(call, result_told(result), outcome.interaction_id))
        return
    messages.append(tool_message(call, denial(outcome, question=True).content(), outcome.interaction_id))
