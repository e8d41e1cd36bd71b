"""What every chat channel says about an approval request, in plain text. Pure, no I/O.

The channels draw it differently (a Lark card, a DingTalk card template's variables), from the
same words: what the request is about, when, what the approved tool did (`core.wording`, with the
tool's own plugin's sentence), and texts split to fit one message.
"""

from __future__ import annotations

from contracts import GateAsk, GrantScope, InteractionRequest, ToolApprovalAsk
from core.wording.tools import LINE_LIMIT, cut, result_line

__all__ = ["LINE_LIMIT", "cut", "grants_session", "result_line", "subject", "text_chunks"]


def grants_session(request: InteractionRequest) -> bool:
    """Whether approving it may allow the same call for the rest of the session (a button)."""
    ask = request.ask
    return isinstance(ask, ToolApprovalAsk) and GrantScope.SESSION in ask.grants


def subject(request: InteractionRequest) -> str:
    """What the request is about, for titles: the tool, or the graph task a gate holds."""
    ask = request.ask
    return f"task {ask.task_id}" if isinstance(ask, GateAsk) else ask.tool


def text_chunks(text: str, limit: int) -> list[str]:
    """Split `text` into messages of at most `limit` characters, on line boundaries.

    A line longer than `limit` is cut into `limit`-sized pieces; whitespace-only pieces are
    dropped (chats reject empty texts), so `[]` means there is nothing to send.
    """
    if limit <= 0:
        raise ValueError(f"limit must be a positive number of characters, got {limit}")
    if len(text) <= limit:
        return [text] if text.strip() else []
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for line in text.split("\n"):
        for piece in [line[i : i + limit] for i in range(0, len(line), limit)] or [""]:
            added = len(piece) + (1 if current else 0)
            if current and length + added > limit:
                chunks.append("\n".join(current))
                current, added = [], len(piece)
                length = 0
            current.append(piece)
            length += added
    chunks.append("\n".join(current))
    return [chunk.strip("\n") for chunk in chunks if chunk.strip()]
