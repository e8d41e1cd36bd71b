"""The audit trail: every writer appends through `audit`, so each entry says who, where, when."""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import AuditEntry, AuditKind


def audit(
    trail: list[AuditEntry],
    kind: AuditKind,
    principal: str,
    *,
    channel: str = "system",
    interaction_id: str | None = None,
    comment: str | None = None,
    at: datetime | None = None,
) -> AuditEntry:
    """Append one entry (`at`: the workflow's time unless the event carries its own)."""
    entry = AuditEntry(
        kind=kind,
        at=at or workflow.now(),
        principal=principal,
        channel=channel,
        interaction_id=interaction_id,
        comment=comment,
    )
    trail.append(entry)
    return entry
