"""The workflow runner's payload questions, answered without entering the sandbox.

For every payload of every workflow activation, coming in and going out, the SDK (`temporalio`
1.35) asks the workflow instance which serialization context applies (`get_serialization_context`)
and, for external storage, where a stored payload belongs (`get_external_store_context`): six
passes over the activation's payloads, one or two questions each. In the sandbox every question is
a round into it (code run there with its importer applied): 4–5 ms of an approval's 20.

The answers matter only to a converter that uses them. `takes_no_context` tells whether a data
converter is one that does not: none of its parts takes a serialization context
(`DataConverter.with_context` gives the converter itself back), and its external storage, if it
has one, is Synapse's artifact store alone (no driver selector, which could choose by the
context), whose claim is the artifact's id wherever the payload came from. For such a converter
`ContextFree` wraps the runner and answers both questions outside the sandbox: the run's own
workflow context and the run as the storage target. The workflow code still runs in the sandbox,
which still checks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import (
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
    WorkflowSerializationContext,
)
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails, WorkflowRunner
from temporalio.workflow import Info

from .artifacts.claim_check import ArtifactStorageDriver

ANY_CONTEXT = WorkflowSerializationContext(namespace="any", workflow_id="any")
"""A context to offer a converter: one that takes contexts returns a new converter for it."""


def takes_no_context(converter: DataConverter) -> bool:
    """Whether `converter` encodes, decodes and stores every payload the same in any context."""
    if converter.with_context(ANY_CONTEXT) is not converter:
        return False
    storage = converter.external_storage
    return storage is None or (
        storage.driver_selector is None
        and all(isinstance(driver, ArtifactStorageDriver) for driver in storage.drivers)
    )


class ContextFree(WorkflowRunner):
    """`runner`, with its instances' payload questions answered outside the sandbox (use only
    with a converter that `takes_no_context`)."""

    def __init__(self, runner: WorkflowRunner) -> None:
        self.runner = runner

    def prepare_workflow(self, defn: Any) -> None:  # the SDK's workflow definition
        self.runner.prepare_workflow(defn)

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _ContextFreeInstance(self.runner.create_instance(det), det.info)

    def set_worker_level_failure_exception_types(self, types: Sequence[type[BaseException]]) -> None:
        self.runner.set_worker_level_failure_exception_types(types)


class _ContextFreeInstance(WorkflowInstance):
    """A workflow instance whose payloads all belong to its run."""

    def __init__(self, instance: WorkflowInstance, info: Info) -> None:
        self._instance = instance
        self._context = WorkflowSerializationContext(namespace=info.namespace, workflow_id=info.workflow_id)
        self._target = StorageDriverStoreContext(
            target=StorageDriverWorkflowInfo(
                id=info.workflow_id, run_id=info.run_id, type=info.workflow_type, namespace=info.namespace
            )
        )

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        return self._instance.activate(act)

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        return self._context

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return self._target

    def get_info(self) -> Info:
        return self._instance.get_info()

    def get_thread_id(self) -> int | None:
        return self._instance.get_thread_id()
