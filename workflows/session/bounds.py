"""What a session keeps in its state, and what it lets go after each turn.

The conversation keeps its newest messages (whole turns, within `MESSAGES_KEPT`), the audit
trail its newest entries, and the decided-interaction ledger its newest outcomes; the rest is
archived as artifact pages (`workflows/stream/archive.py`) that the API still serves. At
continue-as-new the chunk stream keeps its newest `STREAM_KEPT` chunks and archives the rest.
So state, query answers and continue-as-new inputs stay small however long a session runs.
Archiving issues commands (local activities): changing when it runs is a gated change.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import WorkflowStreamState

    from contracts import UniversalMessage

    from .state import SessionState

from ..stream.archive import Budget, archive, archive_stream, overflow

MESSAGES_KEPT = Budget(max_items=100, max_bytes=256 * 1024)
"""The conversation the workflow keeps (and agents see at most)."""
AUDIT_KEPT = Budget(max_items=200, max_bytes=128 * 1024)
DECIDED_KEPT = 100
"""Decided interactions remembered to answer "already decided" (older ones: "not found")."""
STREAM_KEPT = 500
"""Chunks the stream carries into the next run; older ones are read from the archive."""
STREAM_PAGE = 200
"""Chunks per archived stream page."""


def _turn_start(message: UniversalMessage) -> bool:
    return message.role == "user"


async def let_go(owner_id: str, state: SessionState) -> None:
    """After a turn: archive what the state no longer needs to keep, forget old decisions."""
    cut = overflow(state.messages, MESSAGES_KEPT, _turn_start)
    if cut:
        state.message_archive = await archive(
            owner_id, "messages", state.messages, cut, state.message_archive
        )
    cut = overflow(state.audit, AUDIT_KEPT)
    if cut:
        state.audit_archive = await archive(owner_id, "audit", state.audit, cut, state.audit_archive)
    if len(state.decided) > DECIDED_KEPT:
        for interaction_id in list(state.decided)[: len(state.decided) - DECIDED_KEPT]:
            del state.decided[interaction_id]
            state.cards.pop(interaction_id, None)


async def trim_stream(owner_id: str, state: SessionState, stream: WorkflowStreamState) -> int:
    """Archive the stream's chunks beyond the newest `STREAM_KEPT`; the offset to truncate up to."""
    return await archive_stream(owner_id, state, stream, kept=STREAM_KEPT, page=STREAM_PAGE)
