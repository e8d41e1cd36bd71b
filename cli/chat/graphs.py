"""Task graphs from the REPL: `/graph run FILE` submits a blueprint and watches it (a progress
line per task change; its gates and tool approvals are asked inline like the session's), and
`/graph status [ID]` shows a graph's tasks."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
from rich.table import Table
from rich.text import Text

from contracts import ENDED_OUTSIDE, GraphStatus, GraphView
from core.client import SynapseError

from .chat import Chat, CommandError
from .state import Request

WATCH_SECONDS = 1.0
ENDED = (GraphStatus.COMPLETED, GraphStatus.FAILED, GraphStatus.CANCELLED, *ENDED_OUTSIDE)


async def run(chat: Chat, args: list[str]) -> None:
    path = (chat.cwd / args[0]).expanduser()
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CommandError(f"{args[0]}: cannot be read ({err.strerror})") from None
    except ValueError as err:
        raise CommandError(f"{args[0]}: not JSON ({err})") from None
    if not isinstance(body, dict):
        raise CommandError(
            f'{args[0]}: give a PlanBlueprint object, or {{"blueprint": ..., "approvers": [...]}}'
        )
    blueprint = body.pop("blueprint") if "blueprint" in body else body
    extra = body if blueprint is not body else {}
    created = await chat.client.submit_graph(blueprint, **extra)
    chat.state.last_graph = created.graph_id
    chat.renderer.note(
        Text(f"◆ task graph {created.graph_id} ({created.status}): {', '.join(created.tasks)}", "magenta")
    )
    task = asyncio.ensure_future(watch(chat, created.graph_id))
    chat.background.add(task)
    task.add_done_callback(chat.background.discard)


async def status(chat: Chat, args: list[str]) -> None:
    graph_id = args[0] if args else chat.state.last_graph
    if graph_id is None:
        raise CommandError("no graph yet: /graph status ID, or /graph run FILE first")
    view = await chat.client.graph(graph_id)
    chat.renderer.note(
        Text(f"graph {view.graph_id}: {view.status}" + (f" ({view.reason})" if view.reason else ""), "bold")
    )
    table = Table("task", "status", "version", "assignee", "output / why", box=None, padding=(0, 2))
    for task in view.tasks:
        said = task.reason if task.reason else _short(task.output)
        table.add_row(
            task.task_id,
            task.status + (" (paused)" if task.paused else ""),
            str(task.version),
            task.assignee_id,
            said,
        )
    chat.console.print(table)
    for interaction in view.pending_interactions:
        chat.renderer.note(
            f"  waiting: {Request.of_interaction(interaction).line()} ({interaction.interaction_id})",
            "yellow",
        )


async def watch(chat: Chat, graph_id: str) -> None:
    """Show the graph's task changes as they happen, and ask its requests, until it ends."""
    seen: dict[str, tuple[str, int]] = {}
    asked: set[str] = set()
    while True:
        with contextlib.suppress(SynapseError, httpx.HTTPError):
            view = await chat.client.graph(graph_id)
            _changes(chat, view, seen)
            _requests(chat, view, asked)
            if view.status in ENDED:
                outputs = f": {_short(view.outputs)}" if view.outputs else ""
                chat.renderer.note(Text(f"◆ graph {graph_id} {view.status}{outputs}", "magenta"))
                return
        await asyncio.sleep(WATCH_SECONDS)


def _changes(chat: Chat, view: GraphView, seen: dict[str, tuple[str, int]]) -> None:
    for task in view.tasks:
        now = (str(task.status), task.version)
        if seen.get(task.task_uuid) != now:
            seen[task.task_uuid] = now
            version = f" v{task.version}" if task.version > 1 else ""
            chat.renderer.note(Text(f"◆ graph task {task.task_id}{version}: {task.status}", "magenta"))


def _requests(chat: Chat, view: GraphView, asked: set[str]) -> None:
    waiting = {i.interaction_id: Request.of_interaction(i) for i in view.pending_interactions}
    for interaction_id, request in waiting.items():
        if interaction_id not in asked:
            asked.add(interaction_id)
            chat.state.pending[interaction_id] = request
            chat.approvals.unstreamed.add(interaction_id)
            chat.approvals.arrived(request)
    for interaction_id in asked - set(waiting):
        if chat.state.pending.pop(interaction_id, None) is not None:
            chat.approvals.decided(interaction_id)


def _short(value: Any, limit: int = 80) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


HANDLERS = {"graph run": run, "graph status": status}
