"""A run whose starter says its generation writes no version marker and runs as a marked run of
the baseline does; a worker refuses a generation its code does not know without failing the run.

Synapse's starters (the API, continue-as-new, a session starting a graph, a graph starting a
task's run) put `GENERATION` in the run's input; a run without it (a client of its own, an older
history) is decided by markers (`test_versioning.py`).
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle, WorkflowHistory

from api.calls import sessions as session_calls
from contracts import (
    GraphConfig,
    InboundMessage,
    LiveSession,
    PlanBlueprint,
    SessionConfig,
    SessionControl,
)
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.support import generation_in, is_patch_marker, is_version_upsert, versions_written
from worker import build_worker
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
from workflows.identity.ids import graph_workflow_id, session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.session.view import start_search_attributes
from workflows.versioning import BEFORE_BASELINE, GENERATION, NewerGeneration, changes

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"
NEWER = GENERATION + 1


def _message(text: str = DELETE_CANCELLED) -> InboundMessage:
    return InboundMessage(content=text, sender_id="alice", chat_id="test")


WORKFLOW_TASK_EVENTS = {
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
}


def _commands(history: WorkflowHistory, *, without_versions: bool = False) -> list[str]:
    """The run's events less its workflow tasks' own (how many tasks a turn takes depends on timing:
    a query that arrives while a local activity runs has its task completed early)."""
    return [
        EventType.Name(event.event_type)
        for event in history.events
        if event.event_type not in WORKFLOW_TASK_EVENTS
        and not (without_versions and (is_patch_marker(event) or is_version_upsert(event)))
    ]


# ------------------------------------------------------------------ which changes a generation takes


@pytest.mark.parametrize(
    ("at_start", "generation", "beyond_baseline"),
    [
        ((), 4, set()),
        (("a",), 4, set()),
        (("a",), 5, {"a"}),
        (("a", "b"), 5, {"a"}),
        (("a", "b"), 6, {"a", "b"}),
    ],
)
def test_a_generation_takes_the_baseline_and_the_changes_made_up_to_it(
    at_start: tuple[str, ...], generation: int, beyond_baseline: set[str]
) -> None:
    with (
        mock.patch.object(changes, "AT_START", at_start),
        mock.patch.object(changes, "GENERATION", changes.BASELINE_GENERATION + len(at_start)),
    ):
        assert changes.changes_of(generation) == BEFORE_BASELINE | beyond_baseline


def test_the_baseline_generation_is_what_a_run_of_the_baseline_marker_takes() -> None:
    assert changes.changes_of(changes.BASELINE_GENERATION) == BEFORE_BASELINE
    assert GENERATION == changes.BASELINE_GENERATION + len(changes.AT_START)
    assert changes.changes_of(GENERATION) == BEFORE_BASELINE | set(changes.AT_START)


def test_a_generation_before_the_first_is_refused_as_such() -> None:
    with pytest.raises(ValueError, match=r"no run is of generation 3: the first is 4"):
        changes.changes_of(changes.BASELINE_GENERATION - 1)


@pytest.mark.parametrize("generation", [NEWER, 99])
def test_a_generation_this_code_does_not_know_is_refused_by_number(generation: int) -> None:
    with pytest.raises(NewerGeneration, match=rf"of generation {generation}; .* a newer worker must take it"):
        changes.changes_of(generation)


@given(st.lists(st.text("abcdefgh-", min_size=1, max_size=8), unique=True, max_size=6))
def test_each_generation_adds_the_one_change_made_next_to_the_one_before(later: list[str]) -> None:
    names = [f"later-{name}" for name in later]  # never one of the baseline's ids
    last = changes.BASELINE_GENERATION + len(names)
    with mock.patch.object(changes, "AT_START", tuple(names)), mock.patch.object(changes, "GENERATION", last):
        taken = [changes.changes_of(g) for g in range(changes.BASELINE_GENERATION, last + 1)]
    assert taken[0] == BEFORE_BASELINE
    assert [sorted(after - before) for before, after in itertools.pairwise(taken)] == [
        [name] for name in names
    ]
    assert all(before < after for before, after in itertools.pairwise(taken))


# ------------------------------------------------------------------ runs on a real server


async def _pending(handle: WorkflowHandle[Any, LiveSession]) -> LiveSession:
    return await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda status: bool(status.pending_interactions),
        what="a pending approval",
    )


async def test_a_session_the_api_starts_writes_no_marker_and_runs_as_a_marked_one(
    client: Client, settings: Settings
) -> None:
    queue = settings.temporal.task_queue
    marked_key, api_key = (f"gen-{kind}-{uuid.uuid4().hex[:8]}" for kind in ("marked", "api"))
    async with build_worker(client, settings):
        config = SessionConfig(session_key=marked_key)
        marked = await client.start_workflow(  # a client of its own, starting as the API does
            SessionWorkflow.run,
            SessionRunInput(config=config),
            id=session_workflow_id(marked_key),
            task_queue=queue,
            search_attributes=start_search_attributes(config),
            start_signal="submit_message",
            start_signal_args=[_message()],
        )
        await session_calls.send_message(client, queue, SessionConfig(session_key=api_key), _message())
        started = client.get_workflow_handle(session_workflow_id(api_key))
        first, second = await _pending(marked), await _pending(started)
        marked_history, api_history = await marked.fetch_history(), await started.fetch_history()
        for handle in (marked, started):
            await handle.signal(SessionWorkflow.cancel, SessionControl(reason="done"))
    assert first.pending_interactions[0].content == second.pending_interactions[0].content
    assert (generation_in(marked_history), generation_in(api_history)) == (None, GENERATION)
    assert versions_written(api_history) == (0, 0)
    markers = 1 + len(changes.AT_START)  # the baseline's, and each change's since
    assert versions_written(marked_history) == (markers, markers)
    assert _commands(api_history) == _commands(marked_history, without_versions=True), (
        "the same commands, less the marker and its upsert"
    )


async def test_a_graph_and_the_runs_of_its_tasks_write_no_marker(client: Client, settings: Settings) -> None:
    graph_id = str(uuid.uuid4())
    blueprint = {
        "new_tasks": [
            {"task_id": name, "assignee_id": "Agent:demo", "input_data": {"echo": name}}
            for name in ("a", "b")
        ],
        "new_edges": [{"source_task_id": "a", "target_task_id": "b"}],
    }
    async with build_worker(client, settings):
        graph = await client.start_workflow(
            TaskGraphWorkflow.run,
            GraphRunInput(
                config=GraphConfig(graph_id=graph_id, requested_by="alice"),
                blueprint=PlanBlueprint.model_validate(blueprint),
                generation=GENERATION,  # as the API starts graphs
            ),
            id=graph_workflow_id(graph_id),
            task_queue=settings.temporal.task_queue,
            task_timeout=GRAPH_TASK_TIMEOUT,
        )
        view = await graph.result()
    assert view.status == "completed"
    history = await graph.fetch_history()
    children = [
        e.child_workflow_execution_started_event_attributes.workflow_execution.workflow_id
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
    ]
    assert len(children) == 2
    runs = [history, *[await client.get_workflow_handle(child).fetch_history() for child in children]]
    assert [generation_in(run) for run in runs] == [GENERATION] * 3
    assert [versions_written(run) for run in runs] == [(0, 0)] * 3


# The refused activation drops its start signal's handler coroutine unawaited (the SDK's; the
# signal is delivered again with the next attempt, as the test shows).
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <coroutine object _WorkflowInstanceImpl._process_signal_job"
)
async def test_a_run_of_a_newer_generation_waits_for_a_worker_that_knows_it(
    client: Client, settings: Settings
) -> None:
    key = f"gen-newer-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, settings):
        handle = await client.start_workflow(
            SessionWorkflow.run,
            SessionRunInput(config=SessionConfig(session_key=key), generation=NEWER),
            id=session_workflow_id(key),
            task_queue=settings.temporal.task_queue,
            start_signal="submit_message",
            start_signal_args=[_message()],
        )
        failed = await assert_eventually(
            handle.fetch_history,
            lambda h: any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED for e in h.events),
            what="the workflow task refused",
        )
    failure = next(
        e.workflow_task_failed_event_attributes.failure
        for e in failed.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    )
    assert f"this run is of generation {NEWER}" in failure.message
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING, "refused, not failed"
    with mock.patch.object(changes, "GENERATION", NEWER):  # a worker of the newer code
        async with build_worker(client, settings):
            pending = await _pending(handle)
            await handle.signal(SessionWorkflow.cancel, SessionControl(reason="done"))
            await handle.result()
    assert DELETE_CANCELLED in json.dumps(pending.pending_interactions[0].content), "the session answered"


async def test_a_worker_refuses_an_input_with_a_field_its_code_does_not_know_without_failing_the_run(
    client: Client, settings: Settings
) -> None:
    """What a worker from before the `generation` field does with a run that says its generation
    (here: a field this code does not know): its workflow task fails and is retried."""
    key = f"gen-field-{uuid.uuid4().hex[:8]}"
    config = SessionConfig(session_key=key).model_dump(mode="json", by_alias=True)
    async with build_worker(client, settings):
        handle = await client.start_workflow(
            "SessionWorkflow",
            {"config": config, "generation": GENERATION, "a_field_from_later": 1},
            id=session_workflow_id(key),
            task_queue=settings.temporal.task_queue,
        )
        failed = await assert_eventually(
            handle.fetch_history,
            lambda h: any(e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED for e in h.events),
            what="the workflow task refused",
        )
        assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING, "refused, not failed"
        await handle.terminate("done")
    failure = next(
        e.workflow_task_failed_event_attributes.failure
        for e in failed.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    )
    assert "a_field_from_later" in failure.message or "a_field_from_later" in str(failure.cause)
