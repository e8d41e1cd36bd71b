"""How the REPL shows a session's stream through rich: Markdown answers, tool calls and their
results inline, a running command's output live, decisions with who made them, graph progress.

Requests for a person are not printed here as they arrive: the approval prompt shows them
(`request`) when it asks. A call's arguments, summary, folder and reason show their non-printing
characters escaped (`core.visible`): a terminal would act on a C1 control, a direction override
would reorder what the person reads.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleDimensions
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

from contracts import (
    Asking,
    CommandEnded,
    EventModel,
    GateAsk,
    GraphStarted,
    Output,
    QuestionAsk,
    TaskStreamChunk,
    Thinking,
    ToolCalled,
    ToolUsed,
    TurnAnswered,
    TurnCompleted,
    TurnStarted,
)
from core.visible import visible
from core.wording import Tone, line_of

from .state import ChatState, Request

LEXERS = {"sql": ("sql", "sql"), "terminal": ("command", "bash")}
"""Tools whose main argument is shown highlighted: tool → (argument, lexer)."""
STYLES: dict[Tone, str] = {
    "ok": "green",
    "bad": "red",
    "note": "yellow",
    "call": "blue",
    "graph": "magenta",
    "thinking": "dim italic",
    "plain": "dim",
}
"""How a line of each tone (`core.wording`) is printed."""


class TerminalConsole(Console):
    """A console as wide as the terminal is now: not `COLUMNS`, which shells and test runners set
    and leave stale, and not 80 when stdout is prompt_toolkit's proxy."""

    @property
    def size(self) -> ConsoleDimensions:
        try:
            columns, lines = os.get_terminal_size(sys.__stdout__.fileno() if sys.__stdout__ else 1)
        except (OSError, ValueError):
            return super().size
        return ConsoleDimensions(columns, lines)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def hard_breaks(text: str) -> str:
    """Markdown in which each line break stays one (agents' answers are often lines, e.g. rows of a
    SELECT), except inside code blocks."""
    lines = text.rstrip("\n").split("\n")
    fenced = False
    for index, line in enumerate(lines[:-1]):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.strip():
            lines[index] = line + "  "
    return "\n".join(lines)


def inline_markdown(text: str, style: str = "") -> Text:
    """A line of Markdown as styled text, its markup gone: `code` bold, **strong**, *emphasis*,
    a link's words (for one-line recaps, where a Markdown block would take the screen)."""
    out = Text(style=style)
    tokens = MarkdownIt().parseInline(text)
    styles: list[str] = []
    for token in tokens[0].children or [] if tokens else []:
        if token.type in ("text", "html_inline"):
            out.append(token.content, " ".join(styles) or None)
        elif token.type == "code_inline":
            out.append(token.content, "bold")
        elif token.type in ("strong_open", "em_open", "s_open"):
            styles.append({"strong_open": "bold", "em_open": "italic", "s_open": "strike"}[token.type])
        elif token.type in ("strong_close", "em_close", "s_close") and styles:
            styles.pop()
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return out


SHOWN_ABOVE = "(output above)"
"""What an answer says instead of a command's output the REPL has just streamed."""


def without_output(answer: str, streamed: str) -> str:
    """`answer` with the command output it repeats (all of it, or its beginning cut with `…`)
    replaced by `SHOWN_ABOVE`: the output was printed as it came."""
    text = streamed.strip("\n")
    start = answer.find(text[:80]) if text else -1
    if start < 0:
        return answer
    same, limit = 0, min(len(text), len(answer) - start)
    while same < limit and answer[start + same] == text[same]:
        same += 1
    if same == len(text):
        return answer[:start] + SHOWN_ABOVE + answer[start + same :]
    if answer[start + same : start + same + 1] == "…":  # the answer's copy was cut
        return answer[:start] + SHOWN_ABOVE + answer[start + same + 1 :]
    return answer


class Renderer:
    """Prints chunks and notes on one console, keeping `state.activity` and `state.turn` current."""

    def __init__(self, console: Console, state: ChatState) -> None:
        self.console = console
        self.state = state
        self._streamed: list[str] = []
        """The output of the turn's last command, as printed while it ran."""

    def note(self, text: str | Text, style: str = "dim") -> None:
        self.console.print(text if isinstance(text, Text) else Text(text, style))

    def error(self, text: str) -> None:
        self.note(Text(f"error: {text}", "red"))

    def chunk(self, chunk: TaskStreamChunk) -> None:
        """Show one chunk of the session's stream: its event in the words of `core.wording`."""
        event = chunk.content
        line = line_of(event)
        if isinstance(event, Output):
            self._output(event)
        elif isinstance(event, TurnStarted):
            self._streamed = []
            self.state.turn, self.state.activity = True, "thinking"
            if event.sender and event.sender != self.state.principal:
                self.note(Text(line.text, "cyan"))
        elif isinstance(event, Thinking):
            self.state.activity = "thinking"
            self.note(Text("  ").append_text(inline_markdown(line.text, STYLES[line.tone])))
        elif isinstance(event, ToolCalled):
            self._streamed = []
            self.state.activity = f"running {event.tool_name}"
            self.note(Text(line.text, STYLES[line.tone]))
        elif isinstance(event, ToolUsed):
            self.state.activity = "thinking"
            self.note(Text(line.text, STYLES[line.tone]))
        elif isinstance(event, TurnAnswered):
            self._answer(event.answer)
        elif isinstance(event, GraphStarted):
            self.state.last_graph = event.graph_id
            self.note(Text(line.text, STYLES[line.tone]))
        elif not isinstance(event, Asking | TurnCompleted):  # requests: the approval prompt shows them
            self.note(Text(line.text, STYLES[line.tone]))
        if chunk.is_final:
            self.state.turn, self.state.activity = False, None

    def event_line(self, event: EventModel) -> None:
        """One event's line, for an event no followed stream brings (a `/graph run` decision)."""
        line = line_of(event)
        self.note(Text(line.text, STYLES[line.tone]))

    def request(self, request: Request) -> None:
        """Show a request for a person in full: the tool and its arguments (SQL and commands
        highlighted, a command with the folder it runs in), why it asks, who may answer."""
        self.console.print()
        ask = request.ask
        if isinstance(ask, QuestionAsk):
            self.console.print(Text(f"? {request.interaction_id} asks: {ask.question}", "bold yellow"))
            return
        if isinstance(ask, GateAsk):
            self._gate(request.interaction_id, ask)
            return
        title = f"? {request.interaction_id} · {request.tool or request.kind} wants approval"
        self.console.print(Text(title, "bold yellow"))
        argument, lexer = LEXERS.get(request.tool, ("", ""))
        value = request.params.get(argument)
        if isinstance(value, str):
            self.console.print(
                Syntax(visible(value), lexer, theme="ansi_dark", word_wrap=True, padding=(0, 2))
            )
        elif request.params:
            self._json(request.params)
        else:
            self.console.print(Text(f"  {request.line()}"))
        context = ask.context
        if context.cwd:
            note = f": {context.sandbox_note}" if context.sandbox_note else ""
            sandbox = f" (sandbox {context.sandbox}{note})" if context.sandbox else ""
            self.console.print(Text(visible(f"  in {context.cwd}{sandbox}"), "dim"))
        for key, said in (("reason", ask.reason), ("rule", ask.rule.description if ask.rule else "")):
            if said:
                self.console.print(Text(visible(f"  {key}: {said}"), "dim"))

    # ------------------------------------------------------------------ pieces

    def _gate(self, interaction_id: str, ask: GateAsk) -> None:
        """A gated graph task: what it asks, who would run it with what input."""
        task = ask.task_id + (f" #{ask.instance}" if ask.instance is not None else "")
        self.console.print(Text(f"? {interaction_id} · graph task {task} waits: {ask.prompt}", "bold yellow"))
        if ask.assignee_id:
            self.console.print(Text(f"  run by {ask.assignee_id} with", "dim"))
        self._json(ask.input_data)

    def _json(self, value: Any) -> None:
        self.console.print(
            Syntax(
                visible(json.dumps(value, indent=2, ensure_ascii=False)),
                "json",
                theme="ansi_dark",
                padding=(0, 2),
            )
        )

    def _output(self, event: Output) -> None:
        """A running command's output, as it comes (its end as a note)."""
        if isinstance(event, CommandEnded):
            self.note(Text(f"  {event.text}", "dim"))
            return
        if event.text:
            self._streamed.append(event.text)
            self.console.print(Text(event.text.removesuffix("\n"), "bright_black"), soft_wrap=True)

    def _answer(self, answer: Any) -> None:
        if isinstance(answer, str):
            self.console.print(Markdown(hard_breaks(without_output(answer, "".join(self._streamed)))))
        else:
            self.console.print_json(json.dumps(answer, ensure_ascii=False, default=str))
