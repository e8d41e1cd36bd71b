"""Terminal output as seed 004's stream chunks: `thinking`, `tool_use`, `content`, `pending`,
`complete`, `error`, each with the metadata of seed 004's table. Pure functions, no I/O.

A generic shell's output is `content`. A program that marks its prompts with OSC 697 (Amazon Q's
shell integration and agent CLIs in its style: `ESC ] 697 ; StartPrompt BEL` ... `EndPrompt`) is a
`qcli` terminal: its spinner lines are `thinking`, its `Using tool: NAME` lines `tool_use`, and
its marked prompt `pending` (it waits for input: the command is complete).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .ansi import keep_colours, strip_ansi

ChunkKind = Literal["thinking", "tool_use", "content", "pending", "complete", "error"]
TerminalType = Literal["generic", "qcli"]

OSC_697 = "\x1b]697;"
START_PROMPT = f"{OSC_697}StartPrompt"
END_PROMPT = f"{OSC_697}EndPrompt"
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏|/-\\"
_THINKING = re.compile(rf"^\s*[{re.escape(_SPINNER)}]?\s*Thinking\.*\s*$", re.IGNORECASE)
_TOOL_USE = re.compile(r"Using tool:\s*([\w.:-]+)")
_PROMPT = re.compile(
    r"\x1b\]697;StartPrompt(?:\x07|\x1b\\)(.*?)\x1b\]697;EndPrompt(?:\x07|\x1b\\)", re.DOTALL
)


@dataclass
class TerminalChunk:
    """One piece of a command's output, typed (seed 004's `StreamChunk` without its timestamp:
    the session's stream stamps it)."""

    type: ChunkKind
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def extend(self, text: str, raw_length: int, styled: str | None = None) -> None:
        """More `content`: the text appended (and its coloured form, `styled`, when either part has
        colours), `raw_length` and `content_length` counted."""
        if styled is not None or "styled" in self.metadata:
            self.metadata["styled"] = self.metadata.get("styled", self.content) + (styled or text)
        self.content += text
        self.metadata["raw_length"] += raw_length
        self.metadata["content_length"] = len(self.content)


def without_prompts(raw: str) -> str:
    """`raw` without its OSC 697 marked prompts."""
    return _PROMPT.sub("", raw)


def prompt_of(raw: str) -> str | None:
    """The text of the last OSC 697 marked prompt in `raw` (None: no complete prompt yet)."""
    prompts = _PROMPT.findall(raw)
    return strip_ansi(prompts[-1]).strip() if prompts else None


def process(raw: str, terminal_type: TerminalType) -> list[TerminalChunk]:
    """Raw output (escape sequences included) as typed chunks, consecutive `content` lines merged."""
    chunks: list[TerminalChunk] = []
    if terminal_type == "generic":
        text = strip_ansi(raw)
        return [content_chunk(text, len(raw), terminal_type, keep_colours(raw))] if text else []
    prompt = _PROMPT.search(raw)
    body, rest = (raw[: prompt.start()], raw[prompt.end() :]) if prompt else (raw, "")
    for line in body.splitlines(keepends=True):  # `\r` ends a line too: a spinner redraws with it
        end = "\n" if line.endswith("\n") else ""
        text = strip_ansi(line.rstrip("\r\n")) + end
        styled = keep_colours(line.rstrip("\r\n")) + end
        if not text.strip():
            if chunks and chunks[-1].type == "content" and text:
                chunks[-1].extend(text, len(line), styled if styled != text else None)
            continue
        if _THINKING.match(text):
            meta = {"raw_length": len(line), "terminal_type": terminal_type}
            chunks.append(TerminalChunk("thinking", text.strip(), meta))
        elif tool := _TOOL_USE.search(text):
            meta = {"tool_name": tool.group(1), "raw_length": len(line), "terminal_type": terminal_type}
            chunks.append(TerminalChunk("tool_use", text.strip(), meta))
        elif chunks and chunks[-1].type == "content":
            chunks[-1].extend(text, len(line), styled if styled != text else None)
        else:
            chunks.append(content_chunk(text, len(line), terminal_type, styled))
    if prompt:
        prompt_text = strip_ansi(prompt.group(1)).strip()
        chunks.append(
            TerminalChunk(
                "pending", prompt_text, {"terminal_type": terminal_type, "prompt_text": prompt_text}
            )
        )
        chunks.extend(process(rest, terminal_type) if rest.strip() else [])
    return chunks


def content_chunk(
    text: str, raw_length: int, terminal_type: TerminalType, styled: str | None = None
) -> TerminalChunk:
    """Text for people: `raw_length`, `content_length`, `terminal_type`, and `styled`, the text
    with its colours (SGR sequences), when it has any."""
    meta: dict[str, Any] = {
        "raw_length": raw_length,
        "content_length": len(text),
        "terminal_type": terminal_type,
    }
    if styled is not None and styled != text:
        meta["styled"] = styled
    return TerminalChunk("content", text, meta)


def complete_chunk(
    summary: str,
    *,
    execution_time: float,
    success: bool,
    exit_status: int | None,
    terminal_type: TerminalType,
) -> TerminalChunk:
    """The command ended: `execution_time`, `command_success`, `terminal_type` (and `exit_status`)."""
    meta = {
        "execution_time": execution_time,
        "command_success": success,
        "terminal_type": terminal_type,
        "exit_status": exit_status,
    }
    return TerminalChunk("complete", summary, meta)


def error_chunk(message: str, error_type: str, terminal_type: TerminalType) -> TerminalChunk:
    """The command could not finish: `error_message`, `error_type`, `terminal_type`."""
    meta = {"error_message": message, "error_type": error_type, "terminal_type": terminal_type}
    return TerminalChunk("error", message, meta)
