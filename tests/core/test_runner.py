"""The worker answers the payloads' context questions outside the sandbox only for a converter
that gives every payload the same bytes whatever the context (`core.runner`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    ExternalStorage,
    PayloadCodec,
    SerializationContext,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from core.connect import synapse_converter
from core.runner import ContextFree, takes_no_context
from core.settings import Settings, TemporalSettings
from tests.core.test_codec import key
from worker import UNSANDBOXED, WORKFLOW_RUNNER, workflow_runner


class SealedPerWorkflow(PayloadCodec, WithSerializationContext):
    """A codec that marks each payload with the workflow it was encoded for: one that needs the
    context the SDK works out for every command."""

    def __init__(self, workflow_id: str | None = None) -> None:
        self.workflow_id = workflow_id

    def with_context(self, context: SerializationContext) -> SealedPerWorkflow:
        return SealedPerWorkflow(
            context.workflow_id if isinstance(context, WorkflowSerializationContext) else None
        )

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        sealed = [Payload(metadata=dict(p.metadata), data=p.data) for p in payloads]
        for payload in sealed:
            payload.metadata["workflow"] = (self.workflow_id or "").encode()
        return sealed

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


class Elsewhere(StorageDriver):
    """An external store of someone else's, which might file payloads by workflow."""

    def name(self) -> str:
        return "elsewhere"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        raise NotImplementedError

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        raise NotImplementedError


def _settings(tmp_path: Path, **temporal: str) -> Settings:
    return Settings(data_dir=tmp_path, temporal=TemporalSettings(**temporal), _env_file=None)


def _choosing_by_context(tmp_path: Path) -> DataConverter:
    """Synapse's converter with a driver selector, which may choose by the store context."""
    synapse = synapse_converter(_settings(tmp_path))
    assert synapse.external_storage is not None
    storage = dataclasses.replace(synapse.external_storage, driver_selector=lambda _context, _payload: None)
    return dataclasses.replace(synapse, external_storage=storage)


@pytest.mark.parametrize(
    ("converter", "expected"),
    [
        (lambda tmp: synapse_converter(_settings(tmp)), True),
        (lambda tmp: synapse_converter(_settings(tmp, codec_keys=f"k1:{key()}")), True),
        (lambda tmp: pydantic_data_converter, True),
        (lambda tmp: dataclasses.replace(pydantic_data_converter, payload_codec=SealedPerWorkflow()), False),
        (
            lambda tmp: dataclasses.replace(
                pydantic_data_converter, external_storage=ExternalStorage(drivers=[Elsewhere()])
            ),
            False,
        ),
        (_choosing_by_context, False),
    ],
    ids=[
        "synapse",
        "synapse-encrypted",
        "pydantic",
        "a-codec-taking-context",
        "someone-elses-store",
        "a-store-choosing-by-context",
    ],
)
def test_only_a_converter_that_ignores_context_and_stores_in_synapse_is_answered_outside(
    tmp_path: Path, converter: Callable[[Path], DataConverter], expected: bool
) -> None:
    assert takes_no_context(converter(tmp_path)) is expected


def test_a_worker_wraps_its_runner_only_for_a_converter_that_takes_no_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEMPORAL_DEBUG", raising=False)  # the SDK's debug mode gets its own runner
    synapse = synapse_converter(_settings(tmp_path))
    sandboxed, unsandboxed = workflow_runner(synapse), workflow_runner(synapse, sandbox=False)
    assert isinstance(sandboxed, ContextFree) and sandboxed.runner is WORKFLOW_RUNNER
    assert isinstance(unsandboxed, ContextFree) and unsandboxed.runner is UNSANDBOXED
    sealing = dataclasses.replace(pydantic_data_converter, payload_codec=SealedPerWorkflow())
    assert workflow_runner(sealing) is WORKFLOW_RUNNER, "its per-command contexts are still worked out"
    assert isinstance(WORKFLOW_RUNNER, SandboxedWorkflowRunner)


def test_in_the_sdks_debug_mode_the_runner_is_the_sdks_own_so_breakpoints_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synapse = synapse_converter(_settings(tmp_path))
    assert workflow_runner(synapse, debug=True) is WORKFLOW_RUNNER
    monkeypatch.setenv("TEMPORAL_DEBUG", "1")  # the SDK's own switch
    assert workflow_runner(synapse) is WORKFLOW_RUNNER
    assert isinstance(workflow_runner(synapse, debug=False), ContextFree)
