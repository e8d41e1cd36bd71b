"""Saved chats: `/chat save TAG`, `/chat resume TAG`, `/chat list`, `/chat delete TAG` (tags kept
in `~/.synapse/chats.json`), and `/chat share FILE.md|FILE.json` (the session log)."""

from __future__ import annotations

import asyncio
import difflib
import json
from dataclasses import replace
from datetime import UTC, datetime

import httpx
from rich.table import Table

from contracts import ToolCalled, ToolUsed, UniversalMessage
from core.client import SynapseError

from .chat import Chat, CommandError
from .sharelog import Ran, as_markdown, session_log

PAGE = 200
STREAM_READ_SECONDS = 15.0
"""How long `/chat share` reads the session's stream for the calls as they ran."""


def _tag(chat: Chat, tag: str) -> str:
    saved = chat.saved.get(tag)
    if saved is not None:
        return saved.session_key
    tags = [c.tag for c in chat.saved.all()]
    near = difflib.get_close_matches(tag, tags, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(near)}?" if near else "/chat list shows the saved ones"
    raise CommandError(f"no chat saved as {tag!r}: {hint}")


async def save(chat: Chat, args: list[str]) -> None:
    state = chat.state
    if not state.started:
        raise CommandError("nothing to save yet: this session starts with your first message")
    try:
        saved = chat.saved.save(args[0], state.key, state.project, state.agent)
    except ValueError as err:
        raise CommandError(str(err)) from None
    chat.renderer.note(
        f"saved as {saved.tag} → session {saved.session_key} (/chat resume {saved.tag} comes back to it)"
    )


async def resume(chat: Chat, args: list[str]) -> None:
    await chat.attach(_tag(chat, args[0]))


async def list_saved(chat: Chat, args: list[str]) -> None:
    chats = chat.saved.all()
    if not chats:
        chat.renderer.note("no saved chats: /chat save TAG saves this one")
        return
    table = Table("tag", "session", "agent", "project", "saved", box=None, padding=(0, 2))
    for saved in chats:
        mark = "* " if saved.session_key == chat.state.key else "  "
        table.add_row(mark + saved.tag, saved.session_key, saved.agent, saved.project, saved.saved_at)
    chat.console.print(table)


async def delete(chat: Chat, args: list[str]) -> None:
    _tag(chat, args[0])
    forgotten = chat.saved.delete(args[0])
    if forgotten is not None:
        chat.renderer.note(f"forgot {forgotten.tag} (session {forgotten.session_key} itself goes on)")


async def share(chat: Chat, args: list[str]) -> None:
    target = (chat.cwd / args[0]).expanduser()
    if target.suffix not in (".md", ".json"):
        raise CommandError(f"{args[0]}: name a .md file (for people) or a .json file (the session log)")
    state = chat.state
    if not state.started:
        raise CommandError("nothing to share yet: this session starts with your first message")
    live = await chat.client.session(state.key)
    audit = await chat.client.audit(state.key)
    log = session_log(
        session_key=state.key,
        agent_id=live.agent_id,
        created_at=live.created_at,
        project_root=live.project or state.project,
        messages=await _conversation(chat, state.key),
        audit=audit.entries,
        checkpoints=[
            {"tag": c.tag, "path": str(chat.saved.path), "created_at": c.saved_at}
            for c in chat.saved.all()
            if c.session_key == state.key
        ],
        exported_at=datetime.now(UTC),
        ran=await _ran(chat, state.key, live.next_offset - 1),
    )
    text = (
        json.dumps(log, indent=2, ensure_ascii=False, default=str)
        if target.suffix == ".json"
        else as_markdown(log)
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    calls = sum(len(m.get("tool_calls", [])) for m in log["messages"])
    chat.renderer.note(
        f"wrote {target}: {len(log['messages'])} messages, {calls} tool calls, {len(log['audit'])} audit entries"
    )


async def _ran(chat: Chat, key: str, last: int) -> dict[str, Ran]:
    """The calls that ran, by interaction id, from the session's stream up to chunk `last` (none
    when it cannot be read within `STREAM_READ_SECONDS`: the log then has the proposed arguments)."""
    ran: dict[str, Ran] = {}
    if last < 0:
        return ran
    chunks = chat.client.events(key)
    try:
        async with asyncio.timeout(STREAM_READ_SECONDS):
            async for chunk in chunks:
                event = chunk.content
                if isinstance(event, ToolCalled) and event.interaction_id:
                    ran[event.interaction_id] = Ran(dict(event.tool_params), chunk.timestamp)
                elif isinstance(event, ToolUsed) and event.interaction_id in ran:
                    ran[event.interaction_id] = replace(ran[event.interaction_id], ended=chunk.timestamp)
                if chunk.sequence_id >= last:
                    break
    except (TimeoutError, SynapseError, httpx.HTTPError) as err:
        chat.renderer.note(
            f"  the stream could not be read ({err or 'too slow'}): the log has the proposed arguments",
            "yellow",
        )
    finally:
        await chunks.aclose()
    return ran


async def _conversation(chat: Chat, key: str) -> list[UniversalMessage]:
    """The whole conversation, oldest first (read back page by page)."""
    page = await chat.client.messages(key, limit=PAGE)
    messages = list(page.messages)
    while page.next_before is not None:
        page = await chat.client.messages(key, before=page.next_before, limit=PAGE)
        messages = [*page.messages, *messages]
    return messages


HANDLERS = {
    "chat save": save,
    "chat resume": resume,
    "chat list": list_saved,
    "chat delete": delete,
    "chat share": share,
}
