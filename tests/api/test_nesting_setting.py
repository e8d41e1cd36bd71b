"""SYNAPSE_MAX_JSON_DEPTH set lower: the door holds to it, and what agents answer is held to it too."""

from __future__ import annotations

import itertools
import json
import uuid
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from contracts import TaskChunkType, TurnAnswered
from core.nesting import cut_note, too_deep
from core.settings import Settings, TemporalSettings

from ..support import collect_events, events
from ..workflows.graph.flows import edge, task
from .test_nesting import DOORS, Door, every_depth, nested, submit, sweep, tasks_once

LOW = 12


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The test's settings with the limit lowered through its variable (the API and the worker)."""
    monkeypatch.setenv("SYNAPSE_MAX_JSON_DEPTH", str(LOW))
    lowered = Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)
    assert lowered.limits.max_json_depth == LOW
    return lowered


def test_the_limit_stays_far_below_what_the_worker_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNAPSE_MAX_JSON_DEPTH", "190")
    with pytest.raises(ValidationError, match="less than or equal to 128"):
        Settings(_env_file=None)


@pytest.mark.parametrize("door", DOORS[:3], ids=[d.name for d in DOORS[:3]])
async def test_a_lower_limit_holds_at_the_door(http: httpx.AsyncClient, door: Door) -> None:
    await sweep(http, door, LOW, every_depth(door, LOW, far=(220,)))


async def test_values_growing_through_data_flow_are_cut_at_the_limit(http: httpx.AsyncClient) -> None:
    """Each task echoes its input, which holds the task before's whole output: one level more per
    task. Past the limit the answers are cut with a note, and the graph runs to its end."""
    chain = [f"c{i}" for i in range(LOW + 4)]
    tasks = [task("c0", input_data={"x": "seed"}), *(task(c, input_data={}) for c in chain[1:])]
    edges = [edge(a, b, data_flow={"mappings": {"x": "output"}}) for a, b in itertools.pairwise(chain)]
    created = await submit(http, tasks, edges)
    done = await tasks_once(
        http,
        created["graph_id"],
        lambda ts: all(ts[c]["status"] == "completed" for c in chain),
        "the chain ran",
    )
    assert done["c3"]["output"] == {"x": {"x": {"x": {"x": "seed"}}}}, "within the limit, kept whole"
    last = done[chain[-1]]["output"]
    assert too_deep(last, LOW) is None and cut_note(LOW) in json.dumps(last)


async def test_a_plan_nested_too_deep_is_refused_with_the_reason_and_the_session_goes_on(
    http: httpx.AsyncClient,
) -> None:
    key = f"deep-{uuid.uuid4().hex[:8]}"
    plan = {"new_tasks": [{"task_id": "a", "assignee_id": "Agent:demo", "input_data": nested(LOW + 2)}]}
    sent = await http.post(f"/sessions/{key}/messages", json={"content": "plan: " + json.dumps(plan)})
    assert sent.status_code == 202, sent.text  # text: the door sees no nesting in it
    chunks = await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE, within=60)
    said = " ".join(c.content.model_dump_json() for c in chunks if c.chunk_type != TaskChunkType.COMPLETE)
    assert f"nests deeper than {LOW} levels" in said and "SYNAPSE_MAX_JSON_DEPTH" in said, said
    again = await http.post(
        f"/sessions/{key}/messages", json={"content": "SELECT customer FROM orders WHERE id = 1"}
    )
    assert again.status_code == 202
    after = {"after": str(chunks[-1].sequence_id)}
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE, params=after, within=60
    )
    assert any("Alice" in str(e.answer) for e in events(chunks, TurnAnswered))
