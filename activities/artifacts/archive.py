"""The `archive_page` activity: writes one `ArchivePage` of a workflow's list to the artifact store.

Run as a local activity (`workflows/stream/archive.py`), so the page travels to the store without
passing through history. Pages are content-addressed: a retry stores nothing twice. The workflow
is recorded among the page's owners (`core.artifacts.owners`), for keys scoped to its project.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import activity

from contracts import ArchivePage, ArtifactRef
from contracts.names import ARCHIVE_PAGE
from core.artifacts import ArtifactStore
from core.artifacts.owners import ArtifactOwners


class ArchiveActivities:
    """Archiving activities on one artifact store."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self.owners = ArtifactOwners.beside(store)

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.archive_page]

    @activity.defn(name=ARCHIVE_PAGE)
    async def archive_page(self, page: ArchivePage) -> ArtifactRef:
        """Store the page; its id goes into the workflow's archive cursor."""
        name = f"{page.owner_id} {page.kind} {page.start}-{page.start + len(page.items) - 1}"
        ref = await asyncio.to_thread(
            self.store.put_json, page.model_dump(mode="json"), name=name, owner_id=page.owner_id
        )
        await asyncio.to_thread(self.owners.add_workflow, ref.artifact_id, page.owner_id)
        return ref
