"""`/tools`, `/mcp`, `/settings`, `/settings reset`, `/help` and `/quit`."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import TypeVar

from rich.table import Table
from rich.text import Text

from core.client import SynapseError

from .chat import Chat, CommandError
from .commands import SPECS
from .places import shown
from .settings import FLAGS, SettingsError, load
from .settings_file import reset

T = TypeVar("T")
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.(?:\s|$)")
NOT_LISTED = "this API does not list {what} yet (GET {route} answered 404): it is older than this client"


async def _listing(call: Awaitable[list[T]]) -> list[T] | None:
    """What a listing route answers; None when this API has no such route (404)."""
    try:
        return await call
    except SynapseError as err:
        if err.status == 404:
            return None
        raise


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one in "e.g." or "i.e.")."""
    return SENTENCE_END.split(text, maxsplit=1)[0]


async def tools(chat: Chat, args: list[str]) -> None:
    listed = await _listing(chat.client.tools())
    if listed is None:
        chat.renderer.note(NOT_LISTED.format(what="tools", route="/tools"), "yellow")
        return
    table = Table("tool", "asks", "from", "what it does", box=None, padding=(0, 2))
    for tool in listed:
        asks = str(tool.approval) + (", two people" if tool.critical else "")
        table.add_row(tool.name, asks, tool.source, first_sentence(tool.description))
    chat.console.print(table)


async def mcp(chat: Chat, args: list[str]) -> None:
    servers = await _listing(chat.client.mcp_servers())
    if servers is None:
        chat.renderer.note(NOT_LISTED.format(what="MCP servers", route="/mcp"), "yellow")
        return
    if not servers:
        chat.renderer.note("no MCP servers are declared (see docs/mcp.md)")
        return
    table = Table("server", "state", "transport", "tools", box=None, padding=(0, 2))
    for server in servers:
        state = Text(
            server.state, "green" if server.state == "up" else "red" if server.state == "down" else "yellow"
        )
        if server.error:
            state.append(f": {server.error}", "dim")
        table.add_row(server.name, state, server.transport, ", ".join(t.name for t in server.tools) or "-")
    chat.console.print(table)


async def settings(chat: Chat, args: list[str]) -> None:
    table = Table("setting", "value", "from", box=None, padding=(0, 2))
    for key, value, source in chat.effective.rows():
        table.add_row(key, value, source)
    chat.console.print(table)
    chat.renderer.note(
        f"files: {shown(chat.effective.user_file)} (yours), {shown(chat.effective.project_file)} (this project's); "
        "env SYNAPSE_CHAT_<KEY>; flags " + ", ".join(FLAGS.values())
    )


async def settings_reset(chat: Chat, args: list[str]) -> None:
    answer = await chat.prompts.key(
        f"Reset {shown(chat.effective.user_file)} to the defaults (a backup is kept)? [y/n] › ", "yn"
    )
    if answer != "y":
        return
    backup = reset(chat.effective.user_file)
    if backup is None:
        chat.renderer.note(f"{shown(chat.effective.user_file)} does not exist: the defaults already apply")
        return
    before = chat.effective
    flags = {
        key: before.settings.model_dump()[key]
        for key, source in before.sources.items()
        if source in FLAGS.values()
    }
    try:
        chat.effective = load(chat.folder, flags)
    except SettingsError as err:
        raise CommandError("; ".join(err.problems)) from None
    chat.renderer.note(f"{shown(chat.effective.user_file)} moved to {shown(backup)}; the defaults apply")
    if not chat.state.started:  # the session to come takes the agent and profile in force now
        chat.state.agent, chat.state.profile = chat.effective.settings.agent, chat.effective.settings.profile
    changed = [
        key
        for key in ("api_url", "api_key", "vi_mode", "history_file")
        if getattr(before.settings, key) != getattr(chat.effective.settings, key)
    ]
    if changed:
        chat.renderer.note(
            f"  changed: {', '.join(changed)}; that takes effect when synapse chat starts again", "yellow"
        )


async def help_(chat: Chat, args: list[str]) -> None:
    table = Table(box=None, show_header=False, padding=(0, 2))
    group = None
    for spec in SPECS:
        if spec.group != group:
            group = spec.group
            table.add_row(Text(group, "bold"), "")
        table.add_row(spec.usage, spec.help)
    chat.console.print(table)
    chat.renderer.note(
        "Several commands may share a line (/pause /status). Anything else goes to the agent: @path attaches "
        "a file or folder, !cmd runs a shell command (! alone: shell mode), //text sends /text. Keys: Enter "
        "sends, Esc-Enter adds a line, Tab completes, Ctrl-C cancels the running turn, Ctrl-L clears, Ctrl-D quits."
    )


async def quit_(chat: Chat, args: list[str]) -> None:
    chat.quitting = True


HANDLERS = {
    "tools": tools,
    "mcp": mcp,
    "settings": settings,
    "settings reset": settings_reset,
    "help": help_,
    "quit": quit_,
}
