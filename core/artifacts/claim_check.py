"""The claim check: Temporal payloads too large for history are kept in the artifact store.

Uses the SDK's external storage (`temporalio.converter.ExternalStorage`, experimental in 1.35):
every payload of `threshold` bytes or more — a message, an activity input or result, a query
or update answer, a continue-as-new input — is stored here and history holds a reference of
about a hundred bytes. It is the safety net under the explicit limits and artifacts: whatever
slips past them cannot push a workflow over Temporal's 2 MB payload limit. Every client and
worker of a deployment must use the same store.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from ..payloads import synapse_data_converter
from .store import ArtifactStore

PAYLOAD_MEDIA_TYPE = "application/x-temporal-payload"
DEFAULT_THRESHOLD = 256 * 1024


class ArtifactStorageDriver(StorageDriver):
    """Stores serialized payloads as artifacts; the claim is the artifact id."""

    def __init__(self, store: ArtifactStore) -> None:
        self.artifacts = store

    def name(self) -> str:
        """Recorded in every reference: keep it stable."""
        return "synapse-artifacts"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        """Store each payload; one claim per payload, in order."""

        def put_all() -> list[StorageDriverClaim]:
            refs = [
                self.artifacts.put(p.SerializeToString(), media_type=PAYLOAD_MEDIA_TYPE) for p in payloads
            ]
            return [StorageDriverClaim(claim_data={"artifact_id": ref.artifact_id}) for ref in refs]

        return await asyncio.to_thread(put_all)

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        """The payloads behind the claims, in order."""

        def get_all() -> list[Payload]:
            return [
                Payload.FromString(self.artifacts.get(claim.claim_data["artifact_id"])[1]) for claim in claims
            ]

        return await asyncio.to_thread(get_all)


def data_converter(store: ArtifactStore, *, threshold: int = DEFAULT_THRESHOLD) -> DataConverter:
    """The pydantic data converter (`core.payloads`) with payloads of `threshold` bytes or more
    claim-checked into `store`."""
    storage = ExternalStorage(drivers=[ArtifactStorageDriver(store)], payload_size_threshold=threshold)
    return dataclasses.replace(synapse_data_converter, external_storage=storage)
