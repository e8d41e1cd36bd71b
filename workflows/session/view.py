"""How a session looks from outside: LiveSession, Web UI details, search attributes.

Pure functions of the session state, called from workflow code. Search attribute upserts
are commands: changing when or what is upserted must be gated with `versioning.patched`.
Current details are not recorded in history and may change freely.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate, TypedSearchAttributes

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ArchiveCursor,
        LiveSession,
        MessagesQuery,
        MessageWindow,
        SessionConfig,
        SessionStatus,
        ToolApprovalAsk,
    )
    from contracts.asks import summary_of
    from contracts.times import utc_text

    from .state import SessionState

from ..identity import search_attributes as keys
from ..identity.ids import session_key_of

SEARCH_STATUS: dict[str, str] = {SessionStatus.ACTIVE: "running"}
"""LiveSession status -> SynapseStatus value, where they differ."""

LIVE_MESSAGES = 20
"""Newest messages a LiveSession shows; older ones are paged (`GET /sessions/{key}/messages`)."""


def live_session(workflow_id: str, config: SessionConfig, state: SessionState) -> LiveSession:
    """The session as people see it."""
    return LiveSession(
        session_id=session_key_of(workflow_id),
        workflow_id=workflow_id,
        status=state.status,
        created_at=state.created_at,
        last_activity=state.last_activity,
        pending_interactions=[*state.pending, *state.relayed],
        agent_id=config.agent_id,
        channel=config.channel,
        approvers=list(config.approvers),
        approval_timeout_seconds=config.approval_timeout_seconds,
        messages=state.messages[-LIVE_MESSAGES:],
        next_offset=state.next_sequence,
        project=config.project,
        user=config.user,
        profile=config.profile,
        sandbox=config.sandbox,
        metadata={
            "queued_messages": len(state.inbox),
            "paused": state.paused,
            "messages_total": state.message_archive.archived + len(state.messages),
        },
    )


def message_window(state: SessionState, query: MessagesQuery) -> MessageWindow:
    """Up to `query.limit` of the kept messages before absolute index `query.before`."""
    first = state.message_archive.archived
    total = first + len(state.messages)
    before = total if query.before is None else min(query.before, total)
    start = max(first, before - query.limit)
    return MessageWindow(
        total=total,
        start=start,
        messages=state.messages[start - first : max(start, before) - first],
        archive=state.message_archive,
    )


def archive_cursor(state: SessionState, kind: str) -> ArchiveCursor:
    """The cursor of one archived list (an empty one for an unknown kind)."""
    cursors = {
        "messages": state.message_archive,
        "audit": state.audit_archive,
        "stream": state.stream_archive,
    }
    return cursors.get(kind, ArchiveCursor())


def search_attributes(config: SessionConfig, state: SessionState) -> list[SearchAttributeUpdate[Any]]:
    """Values of SynapseStatus, SynapsePending, SynapseChannel and SynapseAssignee."""
    return _shown(config, state.status, len(state.pending))


def start_search_attributes(config: SessionConfig) -> TypedSearchAttributes:
    """What a new session shows first (running, nothing pending, its channel and agent), for its
    start to set: the run then has nothing to upsert until its status changes. Its project, if it
    names one, is set here only (a project never changes, so no run upserts it)."""
    return keys.at_start([*_shown(config, SessionStatus.ACTIVE, 0), *keys.project_of(config.project)])


def _shown(config: SessionConfig, status: str, pending: int) -> list[SearchAttributeUpdate[Any]]:
    return [
        keys.STATUS.value_set(SEARCH_STATUS.get(status, status)),
        keys.PENDING.value_set(pending),
        keys.CHANNEL.value_set(config.channel),
        keys.ASSIGNEE.value_set(config.agent_id),
    ]


def details_markdown(workflow_id: str, config: SessionConfig, state: SessionState) -> str:
    """Current details for the Web UI: the status and every pending approval."""
    lines = [f"**Session** `{session_key_of(workflow_id)}` · agent `{config.agent_id}` · {state.status}"]
    for request in state.pending:
        ask = request.ask
        who = ", ".join(request.approvers) or "anyone"
        expires = utc_text(request.expires_at) if request.expires_at else "never"
        lines += [
            "",
            f"**Waiting for approval** `{request.interaction_id}`",
            "",  # a list right under a line reads as that line's text in the Web UI: a blank line first
            *(
                [f"- tool: `{ask.tool}`", f"- arguments: `{ask.summary}`"]
                if isinstance(ask, ToolApprovalAsk)
                else [f"- asks: {summary_of(ask)}"]
            ),
            f"- may approve: {who}",
            f"- times out: {expires} (then denied by `system:timeout`)",
        ]
    return "\n".join(lines)
