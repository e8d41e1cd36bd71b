"""The `read_output` activity: a task's whole output, read back from the artifact store.

An agent answer larger than the inline limit is offloaded (`offload.py`): the graph's state keeps
a preview. Edge conditions, data flow and loops must see the whole of it, so the graph reads it
with this (local) activity when something downstream needs it; it is never replaced by a preview.
A task run's inputs go the other way the same way: over the inline limit, the graph keeps them
with `store_inputs` and the run reads them back whole with `read_output`
(`workflows/graph/by_reference.py`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from contracts import ArtifactRef, RunInputs
from contracts.names import READ_OUTPUT, STORE_INPUTS
from core.artifacts import ArtifactStore
from core.artifacts.store import ArtifactNotFound


class WholeOutputActivities:
    """Whole outputs read back, and task runs' inputs kept, in one artifact store."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.read_output, self.store_inputs]

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

    @activity.defn(name=STORE_INPUTS)
    async def store_inputs(self, inputs: RunInputs) -> ArtifactRef:
        """Keep a run's inputs (as JSON; content-addressed, so a retry stores nothing twice)."""
        return await asyncio.to_thread(
            self.store.put_json, inputs.model_dump(mode="json"), name=inputs.name, owner_id=inputs.owner_id
        )
