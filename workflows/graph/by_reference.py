"""A task run's inputs by reference: too large to carry in its start, kept in the artifact store.

The start of a task run carries its `input_data` and context. Over the graph's inline size
(`GraphConfig.inline_input_bytes`, from SYNAPSE_INLINE_BYTES) they go as answers do the other way
(`whole_outputs`): the graph keeps them whole in the artifact store (`store_inputs`, a local
activity, so they stay out of its history) and the start carries their `ArtifactRef`; the run
reads them back whole (`read_output`) before its agent's first step. Its graph's state keeps
them whole, as before. A run whose inputs cannot be read fails, naming why; never its graph.

Determinism: the size is the payload converter's; storing and reading are local activities,
issued only for inputs over the size of graphs that set it (graphs from before set none).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from contracts import AgentTaskInput, ArtifactRef, RunInputs
    from contracts.names import READ_OUTPUT, STORE_INPUTS

from .budget import payload_size
from .whole_outputs import READ_RETRY, READ_TIMEOUT

STORE_TIMEOUT = timedelta(seconds=30)
STORE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=10))
"""Retried until it works: an artifact is content-addressed, so storing it twice is harmless."""


def run_name(run: AgentTaskInput) -> str:
    """`task <id> v<n>`, `#<k>` for a loop instance."""
    return f"task {run.task_id} v{run.version}" + (f" #{run.instance}" if run.instance is not None else "")


async def carried(run: AgentTaskInput, inline_bytes: int | None) -> AgentTaskInput:
    """The run's input as its start carries it: inputs and context by reference when together
    they are over `inline_bytes` (None: always whole)."""
    if inline_bytes is None or payload_size(run.input_data, run.context) <= inline_bytes:
        return run
    inputs = RunInputs(
        owner_id=run.graph_workflow_id, name=run_name(run), input_data=run.input_data, context=run.context
    )
    ref = await workflow.execute_local_activity(
        STORE_INPUTS,
        inputs,
        result_type=ArtifactRef,
        start_to_close_timeout=STORE_TIMEOUT,
        retry_policy=STORE_RETRY,
        summary=f"keep the inputs of {inputs.name}",
    )
    return run.model_copy(update={"input_data": {}, "context": [], "inputs_ref": ref})


async def whole(run: AgentTaskInput) -> AgentTaskInput:
    """The run's input whole: what came by reference read back (raises `ActivityError` when it
    cannot be read)."""
    if run.inputs_ref is None:
        return run
    kept = await workflow.execute_local_activity(
        READ_OUTPUT,
        run.inputs_ref,
        start_to_close_timeout=READ_TIMEOUT,
        retry_policy=READ_RETRY,
        summary=f"read the inputs of {run_name(run)} ({run.inputs_ref.artifact_id})",
    )
    inputs = RunInputs.model_validate(kept)
    return run.model_copy(update={"input_data": inputs.input_data, "context": inputs.context})
