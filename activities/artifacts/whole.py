"""The `read_output` activity: a task's whole output, read back from the artifact store.

An agent answer larger than the inline limit is offloaded (`offload.py`): the graph's state keeps
a preview. Edge conditions, data flow and loops must see the whole of it, so the graph reads it
with this (local) activity when something downstream needs it; it is never replaced by a preview.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import ArtifactRef
from contracts.names import READ_OUTPUT
from core.artifacts import ArtifactStore
from core.artifacts.store import ArtifactNotFound


class WholeOutputActivities:
    """Reading whole outputs from one artifact store."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.read_output]

    @activity.defn(name=READ_OUTPUT)
    async def read_output(self, ref: ArtifactRef) -> Any:
        """The artifact's content: JSON decoded, text as a string."""
        try:
            info, data = await asyncio.to_thread(self.store.get, ref.artifact_id)
        except ArtifactNotFound as err:
            raise ApplicationError(
                f"artifact {ref.artifact_id} is not in the artifact store", non_retryable=True
            ) from err
        if info.media_type.startswith("application/json"):
            return json.loads(data)
        return data.decode()
