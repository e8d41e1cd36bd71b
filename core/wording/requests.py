"""A request for a person in a sentence: `? tool_1 waits for a person: DELETE FROM orders`."""

from __future__ import annotations

from contracts import Asking, GateAsk, InteractionRequest, QuestionAsk, ToolApprovalAsk


def question_of(request: InteractionRequest) -> str:
    """What a question asks (its typed `ask`; a request from before asks were typed: its content)."""
    if isinstance(request.ask, QuestionAsk):
        return request.ask.question
    content = request.content
    return str(content.get("question") if isinstance(content, dict) else content)


def summary_of(request: InteractionRequest) -> str:
    """What a request is about, on one line."""
    ask = request.ask
    if isinstance(ask, QuestionAsk):
        return f"question: {ask.question}"
    if isinstance(ask, GateAsk):
        instance = f" #{ask.instance}" if ask.instance is not None else ""
        return (
            f"graph task {ask.task_id}{instance}: {ask.prompt}"
            if ask.prompt
            else f"graph task {ask.task_id}{instance}"
        )
    if isinstance(ask, ToolApprovalAsk) and ask.summary:
        return ask.summary
    content = request.content
    if isinstance(content, dict):
        return str(
            content.get("summary")
            or content.get("prompt")
            or content.get("tool_name")
            or request.interaction_type
        )
    return content


def asking_text(event: Asking) -> str:
    """`? tool_1 waits for a person: DELETE FROM orders`, `? input_1 asks: Which region?`."""
    request = event.request
    if isinstance(request.ask, QuestionAsk):
        return f"? {request.interaction_id} asks: {request.ask.question}"
    return f"? {request.interaction_id} waits for a person: {summary_of(request)}"
