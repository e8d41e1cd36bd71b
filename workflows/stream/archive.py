"""Keeping a workflow's lists bounded: the oldest items go, a page at a time, to the artifact store.

`overflow` decides how many of the oldest items to let go so that the rest fits a budget (never
cutting inside a turn when a boundary is given); `archive` writes them as one `ArchivePage`
through the `archive_page` local activity (its input stays out of history) and returns the new
cursor. Pages name the page before them, so readers (`GET /sessions/{key}/messages`, `/audit`,
SSE catch-up) walk back from the cursor's newest page.

Determinism: sizes come from the items' own JSON, the write is an activity. Archiving issues
commands (local activity markers): callers gate it with `versioning.patched`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel
    from temporalio.contrib.workflow_streams import WorkflowStreamState

    from contracts import ArchiveCursor, ArchiveKind, ArchivePage, ArtifactRef
    from contracts.names import ARCHIVE_PAGE

ARCHIVE_TIMEOUT = timedelta(seconds=30)
ARCHIVE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=10))
"""Retried until it works: a page is content-addressed, so writing it twice is harmless."""

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Budget:
    """How much of a list a workflow keeps in its state."""

    max_items: int
    max_bytes: int


def overflow(items: Sequence[M], budget: Budget, boundary: Callable[[M], bool] | None = None) -> int:
    """How many of the oldest `items` to archive so the rest fits `budget`.

    With `boundary`, the kept part starts at an item for which it holds (a user message: a
    turn is never split), and the newest such item is always kept.
    """
    sizes = [len(item.model_dump_json()) for item in items]
    kept_bytes, cut = sum(sizes), 0
    while cut < len(items) and (len(items) - cut > budget.max_items or kept_bytes > budget.max_bytes):
        kept_bytes -= sizes[cut]
        cut += 1
    if boundary is None or cut == 0:
        return cut
    starts = [index for index, item in enumerate(items) if boundary(item)]
    if not starts:
        return 0
    later = [index for index in starts if index >= cut]
    return later[0] if later else starts[-1]


async def archive(
    owner_id: str, kind: ArchiveKind, items: list[Any], count: int, cursor: ArchiveCursor
) -> ArchiveCursor:
    """Archive `items[:count]` as one page, remove them from `items`, and return the new cursor."""
    page = ArchivePage(
        kind=kind,
        owner_id=owner_id,
        start=cursor.archived,
        items=[
            item.model_dump(mode="json") if isinstance(item, BaseModel) else item for item in items[:count]
        ],
        previous=cursor.last_page,
    )
    ref = await workflow.execute_local_activity(
        ARCHIVE_PAGE,
        page,
        result_type=ArtifactRef,
        start_to_close_timeout=ARCHIVE_TIMEOUT,
        retry_policy=ARCHIVE_RETRY,
        summary=f"archive {count} {kind}",
    )
    del items[:count]
    return ArchiveCursor(archived=cursor.archived + count, last_page=ref.artifact_id)


class StreamArchived(Protocol):
    """A state model that archives its chunk stream (`stream_archive` is read by the API)."""

    stream_archive: ArchiveCursor


async def archive_stream(
    owner_id: str, state: StreamArchived, stream: WorkflowStreamState, *, kept: int, page: int
) -> int:
    """Archive the stream's chunks beyond the newest `kept`, `page` chunks per page; the offset to
    truncate the stream up to.

    Pages hold the chunks as the stream stores them (encoded payloads), which is how the API
    reads retained chunks too.
    """
    excess = len(stream.log) - kept
    if excess <= 0:
        return stream.base_offset
    wires = [item.data for item in stream.log[:excess]]
    cursor = state.stream_archive
    if cursor.archived < stream.base_offset:  # first archive of a stream truncated before
        cursor = cursor.model_copy(update={"archived": stream.base_offset})
    while wires:
        count = min(page, len(wires))
        cursor = await archive(owner_id, "stream", wires, count, cursor)
    state.stream_archive = cursor
    return stream.base_offset + excess
