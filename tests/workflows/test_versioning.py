"""Every run decides its code versions when it starts, so a stalled worker cannot split them.

A local activity's result is replayed at its marker, but a first run whose workflow task timed out
while the local activity ran resumes only in the next task. A `workflow.patched()` first asked
right after it answered differently on replay: the session either took the old path as new, or
failed to replay ("Non-deprecated patch marker encountered ...") and was stuck once its worker
restarted. Seen in CI under load, after the turn's `remember` local activity; tested here with the
worker stalled in the turn's first agent step (a quick step: a local activity).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.converter import DataConverter

from activities.agents.step import AgentActivities
from contracts import AgentResult, AgentStepInput, InboundMessage, LiveSession, SessionConfig
from contracts.names import AGENT_STEP
from core.settings import Settings
from tests.conftest import assert_eventually
from tests.support import generation_in, replayer, versions_written
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.versioning import AT_START, BASELINE, BEFORE_BASELINE, GENERATION, patched
from workflows.versioning.changes import (
    AT_START_1,
    BASELINE_1,
    BASELINE_2,
    BASELINE_3,
    BEFORE_BASELINE_1,
    BEFORE_BASELINE_2,
    BEFORE_BASELINE_3,
    NEW_IN_BASELINE,
    NEW_IN_BASELINE_2,
    NEW_IN_BASELINE_3,
)

TASK_TIMEOUT = timedelta(seconds=1)
STALL_LIMIT = 30.0
"""The longest the worker stalls: until a workflow task has timed out meanwhile, at most this."""
HISTORIES = Path(__file__).parents[1] / "histories"
WORKFLOWS = Path(__file__).parents[2] / "workflows"


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


@pytest.mark.parametrize("generation", [None, GENERATION], ids=["by-markers", "by-input"])
async def test_a_worker_stalled_in_a_local_activity_leaves_a_session_that_replays_and_answers(
    client: Client,
    settings: Settings,
    converter: DataConverter,
    monkeypatch: pytest.MonkeyPatch,
    generation: int | None,
) -> None:
    monkeypatch.setattr("worker.AgentActivities", StalledOnce)
    # Every task replays, as after an eviction under load: the stall times a workflow task out.
    settings = settings.model_copy(
        update={"temporal": settings.temporal.model_copy(update={"cached_workflows": 0})}
    )
    StalledOnce.stalled = False
    StalledOnce.release.clear()
    key = f"stalled-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, settings):
        handle = await client.start_workflow(
            SessionWorkflow.run,
            SessionRunInput(config=SessionConfig(session_key=key), generation=generation),
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
    if generation is None:
        assert decided == [(1, BASELINE), *((1, change) for change in AT_START)], (
            "every change, taken at start"
        )
    else:
        assert decided == [], "decided by the input: nothing written"


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


GENERATIONS = {
    "baseline": (BASELINE_1, AT_START_1),
    "baseline2": (BASELINE_2, ()),
    "baseline3": (BASELINE_3, ()),
    "baseline4": (BASELINE, AT_START),
}
"""Tag of the histories recorded by runs of each baseline: its patch id and the changes its runs
decided at start."""
BY_INPUT = {"generation4": 4}
"""Tag of the histories recorded by runs whose input said their generation: no marker at all."""
RECORDED = {tag: sorted(HISTORIES.glob(f"*.{tag}.json")) for tag in [*GENERATIONS, *BY_INPUT]}
BY_MARKERS = {tag: paths for tag, paths in RECORDED.items() if tag in GENERATIONS}


@pytest.mark.parametrize("tag", RECORDED)
def test_runs_recorded_since_each_baseline_are_there_for_each_workflow_kind(tag: str) -> None:
    kinds = {path.name.split("_")[0] for path in RECORDED[tag]}
    assert kinds == {"session", "graph"}
    assert any("task_run" in path.name for path in RECORDED[tag]), "a graph task run's history"


@pytest.mark.parametrize(
    ("tag", "path"),
    [(tag, path) for tag, paths in BY_MARKERS.items() for path in paths],
    ids=[path.stem for paths in BY_MARKERS.values() for path in paths],
)
def test_a_new_run_decides_its_versions_in_its_first_task_and_nowhere_else(tag: str, path: Path) -> None:
    baseline, at_start = GENERATIONS[tag]
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    markers = _markers(history)
    patches = [(task, name) for task, name in markers if not name.startswith("core_")]
    assert patches[0] == (1, baseline), "the baseline is the run's first decision, in its first task"
    later = [(task, name) for task, name in patches[1:] if task != 1 or name not in at_start]
    assert later == [], "after the baseline, only changes made since (at start), and only at start"


@pytest.mark.parametrize("tag", ["baseline2", "baseline3", "baseline4"])
def test_a_run_since_the_second_baseline_writes_one_marker_and_one_version_upsert(tag: str) -> None:
    for path in RECORDED[tag]:
        assert versions_written(WorkflowHistory.from_json(path.stem, path.read_text())) == (1, 1), path.name


@pytest.mark.parametrize("tag", BY_INPUT)
def test_a_run_whose_input_says_its_generation_writes_no_marker_and_no_version_upsert(tag: str) -> None:
    for path in RECORDED[tag]:
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        assert (generation_in(history), versions_written(history)) == (BY_INPUT[tag], (0, 0)), path.name


def test_a_change_nobody_declared_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'made-up-change'.*AT_START"):
        patched("made-up-change")


def test_workflow_code_asks_for_changes_only_through_versioning() -> None:
    direct = [
        f"{path.relative_to(WORKFLOWS)}:{number}"
        for path in WORKFLOWS.rglob("*.py")
        if path.parent.name != "versioning"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "workflow.patched(" in line and "`" not in line
    ]
    assert direct == []


def test_every_change_id_is_declared_once() -> None:
    assert not set(AT_START) & BEFORE_BASELINE
    assert len(set(AT_START)) == len(AT_START)
    baselines = {BASELINE, BASELINE_3, BASELINE_2, BASELINE_1}
    assert len(baselines) == 4 and not baselines & (BEFORE_BASELINE | set(AT_START))
    assert BEFORE_BASELINE_2 == BEFORE_BASELINE_1 | set(AT_START_1) | NEW_IN_BASELINE_2, (
        "the second baseline folds every change before it"
    )
    assert BEFORE_BASELINE_3 == BEFORE_BASELINE_2 | NEW_IN_BASELINE_3, (
        "the third baseline folds every change before it"
    )
    assert BEFORE_BASELINE == BEFORE_BASELINE_3 | NEW_IN_BASELINE, "the baseline folds every change"
    assert not NEW_IN_BASELINE_2 & (BEFORE_BASELINE_1 | set(AT_START_1)), (
        "a change new to the second baseline is in no older run"
    )
    assert not NEW_IN_BASELINE_3 & BEFORE_BASELINE_2, "a change new to the third baseline is in no older run"
    assert not NEW_IN_BASELINE & BEFORE_BASELINE_3, "a change new to the baseline is in no older run"
