"""Offloading: a result too large to carry goes to the artifact store; history keeps a preview.

Tool results (`run_tool`) and agent answers (`agent_step`) larger than `inline_bytes` (as JSON)
are stored whole as artifacts; what the workflow records, streams and shows the agent is a
preview of about `inline_bytes` plus the artifact's reference. The workflow it was stored for
(`owner_id`) is recorded among the artifact's owners (`core.artifacts.owners`): keys scoped to that
workflow's project may read it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from contracts import ArtifactRef
from core.artifacts import ArtifactStore, preview_text
from core.artifacts.owners import ArtifactOwners

Preview = Callable[[Any, int, ArtifactRef], Any]
"""Makes a preview of content within a byte budget, naming the artifact that holds it whole."""


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (UTF-8)."""
    return len(json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":")).encode())


def generic_preview(content: Any, budget: int, ref: ArtifactRef) -> str:
    """The content as text, cut to about `budget` bytes, saying where the whole of it is."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
    note = f"\n[{ref.size_bytes:,} bytes in all: artifact {ref.artifact_id}]"
    return preview_text(text, max(budget // 4, 200)) + note


class Offloader:
    """Stores what is too large to carry and hands back a preview."""

    def __init__(self, store: ArtifactStore, inline_bytes: int) -> None:
        self.store = store
        self.inline_bytes = inline_bytes
        self.owners = ArtifactOwners.beside(store)

    def fits(self, content: Any) -> bool:
        """Whether `content` may be carried as it is."""
        return json_size(content) <= self.inline_bytes

    async def offload(
        self, content: Any, *, name: str, owner_id: str | None, preview: Preview = generic_preview
    ) -> tuple[Any, ArtifactRef]:
        """Store `content` whole; return its preview and reference."""
        if isinstance(content, str):
            data, media_type = content.encode(), "text/plain; charset=utf-8"
        else:
            data = json.dumps(content, ensure_ascii=False, default=str).encode()
            media_type = "application/json"
        ref = await asyncio.to_thread(
            self.store.put, data, media_type=media_type, name=name, owner_id=owner_id
        )
        if owner_id is not None:
            await asyncio.to_thread(self.owners.add_workflow, ref.artifact_id, owner_id)
        return preview(content, self.inline_bytes, ref), ref
