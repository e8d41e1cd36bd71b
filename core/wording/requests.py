"""A request for a person in a sentence: `? tool_1 waits for a person: DELETE FROM orders`."""

from __future__ import annotations

from contracts import Asking, GateAsk, InteractionRequest, QuestionAsk


def question_of(request: InteractionRequest) -> str:
    """What a question asks (a request of another kind: what it is about)."""
    return request.ask.question if isinstance(request.ask, QuestionAsk) else about(request)


def about(request: InteractionRequest) -> str:
    """What a request is about, on one line: a gate names its graph task and prompt
    (`contracts.asks.summary_of` says what the ask itself is)."""
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
    return ask.summary or ask.tool


def asking_text(event: Asking) -> str:
    """`? tool_1 waits for a person: DELETE FROM orders`, `? input_1 asks: Which region?`."""
    request = event.request
    if isinstance(request.ask, QuestionAsk):
        return f"? {request.interaction_id} asks: {request.ask.question}"
    return f"? {request.interaction_id} waits for a person: {about(request)}"
