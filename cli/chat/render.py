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

from rich.console import Console, ConsoleDimensions
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.text import Text

from contracts import TaskChunkType, TaskStreamChunk
from core.visible import visible

from .state import ChatState, Request

LEXERS = {"sql": ("sql", "sql"), "terminal": ("command", "bash")}
"""Tools whose main argument is shown highlighted: tool → (argument, lexer)."""


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


def decision_line(content: dict[str, Any]) -> Text:
    """`✓ tool_1 approved by bob (http)`, `✗ tool_2 denied by rule:rule_3 (rule): ...`."""
    approved = bool(content.get("approved"))
    who, channel = content.get("decided_by"), content.get("channel")
    if channel == "grant":
        verb = f"allowed by grant {content.get('grant_id')} of {who}"
    elif channel == "rule":
        verb = f"{'allowed' if approved else 'denied'} by {who}"
    elif isinstance(content.get("response_data"), dict) and "text" in content["response_data"]:
        verb = f"answered by {who} ({channel}): {content['response_data']['text']}"
    else:
        verb = f"{'approved' if approved else 'denied'} by {who} ({channel})"
    text = Text(
        f"{'✓' if approved else '✗'} {content.get('interaction_id')} {verb}", "green" if approved else "red"
    )
    comment = content.get("comment")
    if comment and (channel not in ("grant", "rule") or not approved):
        text.append(f": {comment}", "dim")
    return text


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


class Renderer:
    """Prints chunks and notes on one console, keeping `state.activity` and `state.turn` current."""

    def __init__(self, console: Console, state: ChatState) -> None:
        self.console = console
        self.state = state

    def note(self, text: str | Text, style: str = "dim") -> None:
        self.console.print(text if isinstance(text, Text) else Text(text, style))

    def error(self, text: str) -> None:
        self.note(Text(f"error: {text}", "red"))

    def chunk(self, chunk: TaskStreamChunk) -> None:
        """Show one chunk of the session's stream."""
        content: dict[str, Any] = chunk.content if isinstance(chunk.content, dict) else {}
        kind = chunk.chunk_type
        if chunk.metadata.get("streaming"):
            self._output(chunk, content)
        elif kind == TaskChunkType.PROCESSING:
            self.state.turn, self.state.activity = True, "thinking"
            sender = content.get("from")
            if sender and sender != self.state.principal:
                self.note(Text(f"{sender}: {content.get('message')}", "cyan"))
        elif kind == TaskChunkType.THINKING:
            self.state.activity = "thinking"
            self.note(Text(f"  {chunk.content}", "dim italic"))
        elif kind == TaskChunkType.TOOL_CALL_REQUEST:
            self._call(content)
        elif kind == TaskChunkType.TOOL_USE:
            self._result(content)
        elif kind == TaskChunkType.PROGRESS:
            self._progress(content)
        elif kind == TaskChunkType.RESPONSE:
            self._answer(chunk.content)
        elif kind == TaskChunkType.ERROR:
            what = content.get("error") or content.get("message") or content.get("reason") or chunk.content
            tool = f"{content['tool_name']}: " if content.get("tool_name") else ""
            self.note(Text(f"✗ {tool}{what}", "red"))
        elif kind == TaskChunkType.CANCELLED:
            who = content.get("by") or "someone"
            what = "turn" if content.get("turn_cancelled") else "session"
            why = f": {content['reason']}" if content.get("reason") else ""
            self.note(Text(f"✗ {what} cancelled by {who}{why}", "yellow"))
        if chunk.is_final or kind == TaskChunkType.CANCELLED:
            self.state.turn, self.state.activity = False, None

    def request(self, request: Request) -> None:
        """Show a request for a person in full: the tool and its arguments (SQL and commands
        highlighted, a command with the folder it runs in), why it asks, who may answer."""
        self.console.print()
        if request.kind == "user_input":
            self.console.print(
                Text(f"? {request.interaction_id} asks: {request.content.get('question')}", "bold yellow")
            )
            return
        if request.kind == "confirmation":
            self._gate(request)
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
        context = request.content.get("context") or {}
        if context.get("cwd"):
            sandbox = f" (sandbox {context['sandbox']})" if context.get("sandbox") else ""
            self.console.print(Text(visible(f"  in {context['cwd']}{sandbox}"), "dim"))
        for key in ("reason", "rule"):
            if request.content.get(key):
                rule = request.content[key]
                said = rule.get("description", rule) if isinstance(rule, dict) else rule
                self.console.print(Text(visible(f"  {key}: {said}"), "dim"))

    # ------------------------------------------------------------------ pieces

    def _gate(self, request: Request) -> None:
        """A gated graph task: what it asks, who would run it with what input."""
        asked = request.content
        task = f"{asked.get('task_id')}" + (f" #{asked['instance']}" if "instance" in asked else "")
        self.console.print(
            Text(
                f"? {request.interaction_id} · graph task {task} waits: {asked.get('prompt')}", "bold yellow"
            )
        )
        if asked.get("assignee_id"):
            self.console.print(Text(f"  run by {asked['assignee_id']} with", "dim"))
        self._json(asked.get("input_data") or {})

    def _json(self, value: Any) -> None:
        self.console.print(
            Syntax(
                visible(json.dumps(value, indent=2, ensure_ascii=False)),
                "json",
                theme="ansi_dark",
                padding=(0, 2),
            )
        )

    def _call(self, content: dict[str, Any]) -> None:
        tool = content.get("tool_name")
        self.state.activity = f"running {tool}"
        context = content.get("context") or {}
        where = f"  (in {context['cwd']})" if context.get("cwd") else ""
        self.note(Text(visible(f"→ {content.get('summary') or tool}{where}"), "blue"))

    def _result(self, content: dict[str, Any]) -> None:
        result = content.get("result") or {}
        tool = content.get("tool_name") or result.get("tool_id")
        self.state.activity = "thinking"
        if not result.get("ok"):
            self.note(Text(f"✗ {tool} failed: {result.get('error')}", "red"))
            return
        body = result.get("content")
        said = ""
        if isinstance(body, dict) and "rowcount" in body:
            rows = body.get("rows") or []
            count = len(rows) if body.get("columns") else body["rowcount"]
            said = f"{count} row{'' if count == 1 else 's'}" + ("" if body.get("columns") else " affected")
        elif isinstance(body, dict) and "exit_status" in body:
            said = f"exit status {body['exit_status']}"
        self.note(Text(f"← {tool} ok" + (f": {said}" if said else ""), "green"))

    def _progress(self, content: dict[str, Any]) -> None:
        if "approved" in content and "interaction_id" in content:
            self.note(decision_line(content))
        elif "approvals" in content:
            self.note(Text(f"… {content.get('interaction_id')}: {content['approvals']} approvals", "yellow"))
        elif "grant" in content:
            self.note(Text(f"  granted: {content.get('comment')}", "green"))
        elif "revoked_by" in content:
            self.note(Text(f"  {content.get('grant_id')} revoked by {content['revoked_by']}", "yellow"))
        elif "escalated_to" in content:
            self.note(
                Text(
                    f"… {content.get('interaction_id')} escalated to {', '.join(content['escalated_to'])}",
                    "yellow",
                )
            )
        elif "graph_id" in content:
            self.state.last_graph = str(content["graph_id"])
            self.note(
                Text(f"◆ task graph {content['graph_id']}: {', '.join(content.get('tasks', []))}", "magenta")
            )
        elif "task_id" in content:
            status = content.get("status") or ("paused" if content.get("paused") else "resumed")
            version = f" v{content['version']}" if (content.get("version") or 1) > 1 else ""
            instance = f" #{content['instance']}" if "instance" in content else ""
            why = f" ({content['reason']})" if content.get("reason") else ""
            self.note(Text(f"◆ graph task {content['task_id']}{instance}{version}: {status}{why}", "magenta"))
        elif "status" in content:
            self.note(
                Text(
                    f"  session {content['status']}"
                    + (f": {content['reason']}" if content.get("reason") else ""),
                    "yellow",
                )
            )
        elif "message" in content:
            self.note(str(content["message"]))

    def _output(self, chunk: TaskStreamChunk, content: dict[str, Any]) -> None:
        """A running command's output, as it comes."""
        if chunk.chunk_type == TaskChunkType.COMPLETE:
            self.note(Text(f"  {chunk.content}", "dim"))
            return
        text = chunk.content if isinstance(chunk.content, str) else json.dumps(chunk.content)
        if not text:
            return
        self.console.print(Text(text.removesuffix("\n"), "bright_black"), soft_wrap=True)

    def _answer(self, answer: Any) -> None:
        if isinstance(answer, str):
            self.console.print(Markdown(hard_breaks(answer)))
        else:
            self.console.print_json(json.dumps(answer, ensure_ascii=False, default=str))
