"""Every run decides its changes when it starts (`workflows/versioning`), so a stalled worker
cannot split them; a run whose starter says its generation writes no marker at all.

Why at the start: a local activity's result is replayed at its marker, but a first run whose
workflow task timed out while the local activity ran resumes only in the next task. A
`workflow.patched()` first asked right after it answered differently on replay: the session either
took the old path as new, or failed to replay ("Non-deprecated patch marker encountered ...") and
was stuck once its worker restarted. Tested here with the worker stalled in the turn's first
agent step (a quick step: a local activity). 1.0 is generation 1, with no change since; the tests
that need one declare a made-up change (`later`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle, WorkflowHistory
from temporalio.converter import DataConverter

from activities.agents.step import AgentActivities
from api.calls import sessions as session_calls
from contracts import (
    AgentResult,
    AgentStepInput,
    GraphConfig,
    InboundMessage,
    LiveSession,
    PlanBlueprint,
    SessionConfig,
    SessionControl,
)
from contracts.names import AGENT_STEP
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.support import generation_in, is_patch_marker, is_version_upsert, replayer, versions_written
from worker import build_worker
from workflows.graph import TaskGraphWorkflow
from workflows.graph.state import GRAPH_TASK_TIMEOUT, GraphRunInput
from workflows.identity.ids import graph_workflow_id, session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.session.view import start_search_attributes
from workflows.versioning import AT_START, GENERATION, NewerGeneration, changes, patched

TASK_TIMEOUT = timedelta(seconds=1)
STALL_LIMIT = 30.0
"""The longest the worker stalls: until a workflow task has timed out meanwhile, at most this."""
HISTORIES = Path(__file__).parents[1] / "histories"
WORKFLOWS = Path(__file__).parents[2] / "workflows"
DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"
NEWER = GENERATION + 1
LATER = "a-later-change"
"""A made-up change after 1.0, for the tests that need a marker to be written."""


@contextlib.contextmanager
def later(*names: str) -> Iterator[None]:
    """The code as it would be with `names` appended to `AT_START` (and the generation they make)."""
    at_start = (*changes.AT_START, *names)
    with (
        mock.patch.object(changes, "AT_START", at_start),
        mock.patch.object(changes, "GENERATION", 1 + len(at_start)),
    ):
        yield


def _message(text: str = DELETE_CANCELLED) -> InboundMessage:
    return InboundMessage(content=text, sender_id="alice", chat_id="test")


# ------------------------------------------------------------------ which changes a generation takes


def test_one_point_o_is_generation_one_with_no_change_since() -> None:
    assert (GENERATION, AT_START) == (1, ())
    assert changes.changes_of(1) == frozenset()


@pytest.mark.parametrize(
    ("at_start", "generation", "taken"),
    [(("a",), 1, set()), (("a",), 2, {"a"}), (("a", "b"), 2, {"a"}), (("a", "b"), 3, {"a", "b"})],
)
def test_a_generation_takes_the_changes_made_up_to_it(
    at_start: tuple[str, ...], generation: int, taken: set[str]
) -> None:
    with later(*at_start):
        assert changes.changes_of(generation) == taken


def test_a_generation_before_the_first_is_refused_as_such() -> None:
    with pytest.raises(ValueError, match=r"no run is of generation 0: the first \(1.0\) is 1"):
        changes.changes_of(0)


@pytest.mark.parametrize("generation", [NEWER, 99])
def test_a_generation_this_code_does_not_know_is_refused_by_number(generation: int) -> None:
    with pytest.raises(NewerGeneration, match=rf"of generation {generation}; .* a newer worker must take it"):
        changes.changes_of(generation)


@given(st.lists(st.text("abcdefgh-", min_size=1, max_size=8), unique=True, max_size=6))
def test_each_generation_adds_the_one_change_made_next_to_the_one_before(names: list[str]) -> None:
    with later(*names):
        taken = [changes.changes_of(g) for g in range(1, changes.GENERATION + 1)]
    assert taken[0] == frozenset()
    assert [sorted(after - before) for before, after in itertools.pairwise(taken)] == [
        [name] for name in names
    ]


def test_a_change_nobody_declared_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'made-up-change'.*AT_START"):
        patched("made-up-change")


def test_every_change_id_is_declared_once() -> None:
    assert len(set(AT_START)) == len(AT_START)


def test_workflow_code_asks_for_changes_only_through_versioning() -> None:
    direct = [
        f"{path.relative_to(WORKFLOWS)}:{number}"
        for path in WORKFLOWS.rglob("*.py")
        if path.parent.name != "versioning"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "workflow.patched(" in line and "`" not in line
    ]
    assert direct == []


# ------------------------------------------------------------------ recorded histories


RECORDED = sorted(p for p in HISTORIES.glob("*.json") if p.name != "workflow_ids.json")
WORKFLOW_IDS: dict[str, str] = json.loads((HISTORIES / "workflow_ids.json").read_text())


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_every_recorded_run_says_its_generation_and_writes_no_marker(path: Path) -> None:
    history = WorkflowHistory.from_json(WORKFLOW_IDS.get(path.stem, path.stem), path.read_text())
    assert generation_in(history) in range(1, GENERATION + 1), "started by Synapse's starters"
    assert versions_written(history) == (0, 0)


# ------------------------------------------------------------------ runs on a real server


class StalledOnce(AgentActivities):
    """The real agents, in a worker that stalls (its event loop blocked) in the first agent step,
    until `release` is set."""

    stalled = False
    release = threading.Event()

    @activity.defn(name=AGENT_STEP)
    async def agent_step(self, step: AgentStepInput) -> AgentResult:
        if not StalledOnce.stalled:
            StalledOnce.stalled = True
            StalledOnce.release.wait(STALL_LIMIT)  # a starved worker: nothing else in it runs meanwhile
        return await super().agent_step(step)


class Console(threading.Thread):
    """Someone watching the session from another thread (its own event loop and connection): its
    status queried every few milliseconds, so queries keep arriving while the worker is stalled,
    and its history read, to set `timed_out` once a workflow task has timed out."""

    def __init__(self, client: Client, workflow_id: str, timed_out: threading.Event) -> None:
        super().__init__(daemon=True)
        self._target = client.service_client.config.target_host
        self._namespace, self._converter = client.namespace, client.data_converter
        self._workflow_id = workflow_id
        self._timed_out = timed_out
        self._done = threading.Event()

    def run(self) -> None:
        asyncio.run(self._watch())

    async def _watch(self) -> None:
        client = await Client.connect(self._target, namespace=self._namespace, data_converter=self._converter)
        handle = client.get_workflow_handle(self._workflow_id)
        while not self._done.is_set():
            with contextlib.suppress(Exception):  # a query may fail while the worker is stalled
                await handle.query(SessionWorkflow.get_status, rpc_timeout=timedelta(seconds=2))
            events = [event.event_type async for event in handle.fetch_history_events()]
            if EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT in events:
                self._timed_out.set()
            await asyncio.sleep(0.01)

    def close(self) -> None:
        self._done.set()
        self.join(timeout=30)


async def _answers(handle: WorkflowHandle[SessionWorkflow, LiveSession], count: int) -> LiveSession:
    return await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda status: status.metadata["messages_total"] >= 2 * count,
        within=60,
        what=f"{count} answered turns",
    )


@pytest.mark.parametrize("by_input", [False, True], ids=["by-markers", "by-input"])
async def test_a_worker_stalled_in_a_local_activity_leaves_a_session_that_replays_and_answers(
    client: Client,
    settings: Settings,
    converter: DataConverter,
    monkeypatch: pytest.MonkeyPatch,
    by_input: bool,
) -> None:
    monkeypatch.setattr("worker.AgentActivities", StalledOnce)
    # Every task replays, as after an eviction under load: the stall times a workflow task out.
    settings = settings.model_copy(
        update={"temporal": settings.temporal.model_copy(update={"cached_workflows": 0})}
    )
    StalledOnce.stalled = False
    StalledOnce.release.clear()
    key = f"stalled-{uuid.uuid4().hex[:8]}"
    with later(LATER):
        async with build_worker(client, settings):
            handle = await client.start_workflow(
                SessionWorkflow.run,
                SessionRunInput(
                    config=SessionConfig(session_key=key), generation=changes.GENERATION if by_input else None
                ),
                id=session_workflow_id(key),
                task_queue=settings.temporal.task_queue,
                task_timeout=TASK_TIMEOUT,
            )
            console = Console(client, handle.id, StalledOnce.release)
            console.start()
            try:
                await handle.signal(
                    SessionWorkflow.submit_message, InboundMessage(content="hello", sender_id="alice")
                )
                await _answers(handle, 1)
            finally:
                console.close()
        assert StalledOnce.stalled, "the turn's first agent step ran on the stalling worker"
        events = [event.event_type for event in (await handle.fetch_history()).events]
        assert EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT in events, (
            f"the stall timed a workflow task out {events}"
        )

        async with build_worker(client, settings):  # a new worker replays the session from its history
            await handle.signal(
                SessionWorkflow.submit_message, InboundMessage(content="again", sender_id="alice")
            )
            status = await _answers(handle, 2)
        assert [m.content for m in status.messages if m.role == "user"] == ["hello", "again"]
        history = await handle.fetch_history()
        result = await replayer(converter).replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None
    decided = [(task, name) for task, name in _markers(history) if not name.startswith("core_")]
    if by_input:
        assert decided == [], "decided by the input: nothing written"
    else:
        assert decided == [(1, LATER)], "every change, taken at start"


def _markers(history: WorkflowHistory) -> list[tuple[int, str]]:
    """(workflow task, marker) for each marker: the task that wrote it (1: the first), and the
    change it decided (its patch id) or its kind (`core_local_activity`)."""
    found, task = [], 0
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            task += 1
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            attributes = event.marker_recorded_event_attributes
            patch = attributes.details.get("patch-data")
            name = json.loads(patch.payloads[0].data)["id"] if patch else attributes.marker_name
            found.append((task, name))
    return found


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
    with later(LATER):
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
    assert versions_written(marked_history) == (1, 1), "the later change's marker and its upsert"
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
    with later(LATER):  # a worker of the newer code
        async with build_worker(client, settings):
            pending = await _pending(handle)
            await handle.signal(SessionWorkflow.cancel, SessionControl(reason="done"))
            await handle.result()
    assert DELETE_CANCELLED in json.dumps(pending.pending_interactions[0].content), "the session answered"


async def test_a_worker_refuses_an_input_with_a_field_its_code_does_not_know_without_failing_the_run(
    client: Client, settings: Settings
) -> None:
    """What an older worker does with a run whose input has a field added since (as `generation`
    was): its workflow task fails and is retried, the run is not failed."""
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
