"""Bounded views of large text: a preview (head) and a summary (head and tail, with sizes). Pure."""

from __future__ import annotations

from contracts import ArtifactInfo, ArtifactRef


def preview_text(text: str, max_chars: int) -> str:
    """The first `max_chars` characters of `text`, saying how many more there are."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}… ({len(text) - max_chars:,} more characters)"


def summarize(ref: ArtifactRef | ArtifactInfo, content: bytes, *, max_chars: int = 4000) -> str:
    """The artifact for a reader with a budget: whole when it fits, else head and tail with sizes.

    Content that is not UTF-8 text is described (id, media type, size), never dumped.
    """
    header = f"[artifact {ref.artifact_id}, {ref.media_type}, {ref.size_bytes:,} bytes"
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return header + "; binary content, not shown]"
    lines = text.count("\n") + 1
    if len(text) <= max_chars:
        return f"{header}, {lines:,} lines]\n{text}"
    half = max_chars // 2
    head, tail = text[:half], text[-half:]
    omitted = len(text.encode("utf-8")) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    return (
        f"{header}, {lines:,} lines; showing the first {half:,} and last {half:,} characters]\n"
        f"{head}\n… {omitted:,} bytes omitted …\n{tail}"
    )
