"""Reading what workflows archived (`workflows/stream/archive.py`): pages walked back from the newest.

Each page names the page before it, so reading items `[start, end)` starts at the cursor's
newest page and goes back until `start` is covered. Pages are artifacts; reading them needs no
worker and costs the workflow nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from contracts import ArchiveCursor, ArchivePage
from core.artifacts import ArtifactStore


async def archived_items(store: ArtifactStore, cursor: ArchiveCursor, start: int, end: int) -> list[Any]:
    """The archived items with absolute indices in `[start, end)`, oldest first (JSON values)."""
    end = min(end, cursor.archived)
    if start >= end:
        return []
    pages: list[ArchivePage] = []
    page_id = cursor.last_page
    while page_id is not None:
        page = ArchivePage.model_validate(await asyncio.to_thread(store.get_json, page_id))
        if page.start < end:
            pages.append(page)
        if page.start <= start:
            break
        page_id = page.previous
    items: list[Any] = []
    for page in reversed(pages):
        first = max(start, page.start) - page.start
        last = min(end, page.start + len(page.items)) - page.start
        items.extend(page.items[first:last])
    return items
