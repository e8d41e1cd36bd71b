"""Slash commands about the session and what waits in it: `/status`, `/pending`, `/approve`,
`/deny`, `/grants`, `/revoke`, `/rules`, `/pause`, `/resume`, `/cancel`, `/sessions`, `/attach`,
`/agent`."""

from __future__ import annotations

from rich.table import Table

from core.rules.match import describe
from core.times import utc_text
from core.visible import visible

from .chat import SESSIONS_LISTED, Chat, CommandError
from .state import Request


def _started(chat: Chat) -> str:
    if not chat.state.started:
        raise CommandError(f"session {chat.state.key} has not started yet: your first message starts it")
    return chat.state.key


async def status(chat: Chat, args: list[str]) -> None:
    state = chat.state
    if not state.started:
        chat.renderer.note(
            f"session {state.key}: not started yet ({state.agent}, profile {state.profile})", "bold"
        )
        return
    live = await chat.client.session(state.key)
    table = Table(show_header=False, box=None, padding=(0, 2))
    for name, value in (
        ("session", live.session_id),
        ("status", live.status),
        ("agent", live.agent_id),
        ("profile", live.profile or "default"),
        ("project", live.project or "-"),
        ("user", live.user or "-"),
        ("started", utc_text(live.created_at)),
        ("approval timeout", f"{live.approval_timeout_seconds} s"),
        ("waiting", ", ".join(r.interaction_id for r in live.pending_interactions) or "nothing"),
        ("stream", state.connection),
    ):
        table.add_row(name, str(value))
    chat.console.print(table)


def _not_yet(chat: Chat, nothing: str) -> bool:
    """Whether the session has not started yet (said: `nothing` there is, which is no error)."""
    if chat.state.started:
        return False
    chat.renderer.note(f"{nothing}: session {chat.state.key} starts with your first message")
    return True


async def pending(chat: Chat, args: list[str]) -> None:
    if _not_yet(chat, "nothing waits for a person"):
        return
    live = await chat.client.session(chat.state.key)
    rows: list[tuple[Request, str]] = []
    for interaction in live.pending_interactions:
        request = Request.of_interaction(interaction)
        chat.state.pending.setdefault(request.interaction_id, request)
        rows.append((request, utc_text(interaction.expires_at) if interaction.expires_at else "-"))
    listed = {request.interaction_id for request, _ in rows}
    rows += [  # what the session's graph asks (the stream said so; the session's state does not list it)
        (request, "-")
        for request in chat.state.pending.values()
        if request.graph_id is not None and request.interaction_id not in listed
    ]
    if not rows:
        chat.renderer.note("nothing waits for a person")
        return
    table = Table("id", "what", "asks", "expires", box=None, padding=(0, 2))
    for request, expires in rows:
        later = " (later)" if request.interaction_id in chat.approvals.later else ""
        table.add_row(request.interaction_id + later, request.kind, request.line(), expires)
    chat.console.print(table)


async def _request(chat: Chat, interaction_id: str) -> Request:
    request = chat.state.pending.get(interaction_id)
    if request is not None:
        return request
    live = await chat.client.session(_started(chat))
    for interaction in live.pending_interactions:
        if interaction.interaction_id == interaction_id:
            return Request.of_interaction(interaction)
    waiting = ", ".join(r.interaction_id for r in live.pending_interactions) or "nothing waits"
    raise CommandError(f"no request {interaction_id!r} waits in {chat.state.key} ({waiting})")


async def approve(chat: Chat, args: list[str]) -> None:
    chat.approvals.decide(await _request(chat, args[0]), True)


async def deny(chat: Chat, args: list[str]) -> None:
    reason = {"user_message": args[1]} if len(args) > 1 else {}
    chat.approvals.decide(await _request(chat, args[0]), False, **reason)


async def grants(chat: Chat, args: list[str]) -> None:
    if _not_yet(chat, "no grants"):
        return
    listed = (await chat.client.grants(chat.state.key)).grants
    chat.known["grants"] = [g.grant_id for g in listed if g.revoked_at is None]
    if not listed:
        chat.renderer.note("no grants: every call that asks is asked for")
        return
    table = Table("grant", "allows", "by", "uses", "state", box=None, padding=(0, 2))
    for grant in listed:
        allows = visible(f"{grant.tool_id} {grant.head}" if grant.head else grant.summary)
        state = f"revoked by {grant.revoked_by}" if grant.revoked_at else "in force"
        table.add_row(grant.grant_id, f"{allows} ({grant.scope})", grant.granted_by, str(grant.uses), state)
    chat.console.print(table)


async def revoke(chat: Chat, args: list[str]) -> None:
    grant = await chat.client.revoke_grant(_started(chat), args[0], principal=chat.state.principal)
    chat.renderer.note(f"{grant.grant_id} revoked: {visible(grant.summary)} is asked for again")


async def rules(chat: Chat, args: list[str]) -> None:
    listed = await chat.client.rules(project=chat.state.project, profile=chat.state.profile)
    chat.known["rules"] = [r.rule_id for r in listed if not r.rule_id.startswith("profile:")]
    shown = [r for r in listed if r.scope != "project" or r.project == chat.state.project]
    if not shown:
        chat.renderer.note(f"no approval rules for project {chat.state.project}")
        return
    table = Table("rule", "says", "why", "by", box=None, padding=(0, 2))
    for rule in shown:
        table.add_row(rule.rule_id, describe(rule), rule.reason, rule.created_by or "-")
    chat.console.print(table)


async def delete_rule(chat: Chat, args: list[str]) -> None:
    rule = await chat.client.delete_rule(args[0], principal=chat.state.principal)
    chat.renderer.note(f"deleted {rule.rule_id}: {describe(rule)}")


async def pause(chat: Chat, args: list[str]) -> None:
    live = await chat.client.pause(
        _started(chat), f"paused by {chat.state.principal} in synapse chat", chat.state.principal
    )
    chat.renderer.note(f"session {live.session_id} is {live.status}")


async def resume(chat: Chat, args: list[str]) -> None:
    live = await chat.client.resume(
        _started(chat), f"resumed by {chat.state.principal} in synapse chat", chat.state.principal
    )
    chat.renderer.note(f"session {live.session_id} is {live.status}")


async def cancel(chat: Chat, args: list[str]) -> None:
    key = _started(chat)
    answer = await chat.prompts.key(
        f"Cancel session {key} for good (Ctrl-C cancels only a turn)? [y/n] › ", "yn"
    )
    if answer == "y":
        live = await chat.client.cancel(
            key,
            args[0] if args else f"cancelled by {chat.state.principal} in synapse chat",
            chat.state.principal,
        )
        chat.renderer.note(f"session {live.session_id} is {live.status}; /agent or /attach to go on")


async def sessions(chat: Chat, args: list[str]) -> None:
    listed = await chat.client.sessions(limit=SESSIONS_LISTED)
    chat.known["sessions"] = [s.session_key for s in listed]
    table = Table("session", "status", "waiting", "agent", "started", box=None, padding=(0, 2))
    for summary in listed:
        mark = "* " if summary.session_key == chat.state.key else "  "
        started = utc_text(summary.started_at) if summary.started_at else "-"
        status_ = summary.status + (" (closed)" if summary.closed else "")
        table.add_row(
            mark + summary.session_key, status_, str(summary.pending or ""), summary.agent_id or "-", started
        )
    chat.console.print(table)


async def attach(chat: Chat, args: list[str]) -> None:
    await chat.attach(args[0])


async def agent(chat: Chat, args: list[str]) -> None:
    if not args:
        chat.renderer.note(f"agent: {chat.state.agent} (/agent Agent:NAME starts a new session with another)")
        return
    if not args[0].startswith(("Agent:", "Group:")):
        raise CommandError(f"{args[0]!r}: name an agent as Agent:NAME (or a group as Group:NAME)")
    chat.new_session(args[0])
    chat.renderer.note(f"your next message starts session {chat.state.key} with {args[0]}")


HANDLERS = {
    "status": status,
    "pending": pending,
    "approve": approve,
    "deny": deny,
    "grants": grants,
    "revoke": revoke,
    "rules": rules,
    "rules delete": delete_rule,
    "pause": pause,
    "resume": resume,
    "cancel": cancel,
    "sessions": sessions,
    "attach": attach,
    "agent": agent,
}
