"""One nesting limit at every door: a body nested up to SYNAPSE_MAX_JSON_DEPTH levels is taken and
applied, one level more is a 422 naming the path and the limit, and no depth is ever a 500.

Depth counts the body itself as level 1: `{"new_input_data": {"n": "leaf"}}` is 2 levels deep. Each
door is sent the body at its free field's first level, half the limit, the limit - 1, the limit (the
deepest body that reaches the worker), the limit + 1 and + 2, then at 100, 220 and 300 levels (past
what the worker's decoder reads, and past what pydantic writes). Nothing between decides anything:
the door's one check (`api/nesting.py`, an app-wide dependency) is `core.nesting.nested_too_deep`,
which `tests/core/test_nesting.py` holds to a reference at every depth, and what lies past the door
(pydantic, Temporal's codec) fails only past a depth, so the deepest body taken proves the shallower
ones. The door without a workflow is still sent every depth, and `test_nesting_setting.py` sends
every depth under a lower limit through doors that start and change graphs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.calls import graphs as graph_calls
from api.calls.errors import Invalid
from contracts import GraphIntervention
from core.settings import LimitSettings, Settings
from workflows.graph import TaskGraphWorkflow

from ..conftest import assert_eventually
from ..workflows.graph.flows import edge, gated, task

LIMIT = LimitSettings().max_json_depth
FAR = (100, 220, 300)
"""Depths past the limit, past the worker's decoder (200 levels) and past pydantic's serializer (255
levels)."""
DELETE = "DELETE FROM orders WHERE id = 999"


def nested(levels: int, leaf: Any = "leaf") -> Any:
    """`{"n": {"n": ... leaf}}`, `levels` objects deep (0: the leaf itself)."""
    value = leaf
    for _ in range(levels):
        value = {"n": value}
    return value


async def view(http: httpx.AsyncClient, graph_id: str) -> dict[str, Any]:
    response = await http.get(f"/graphs/{graph_id}", params={"limit": 1000})
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def tasks_once(
    http: httpx.AsyncClient, graph_id: str, check: Callable[[dict[str, dict[str, Any]]], bool], what: str
) -> dict[str, dict[str, Any]]:
    """The graph's tasks by blueprint id, once `check` holds of them."""

    async def probe() -> dict[str, dict[str, Any]]:
        return {t["task_id"]: t for t in (await view(http, graph_id))["tasks"]}

    return await assert_eventually(probe, check, within=120, interval=0.2, what=what)


async def pending_once(http: httpx.AsyncClient, graph_id: str, count: int) -> dict[str, str]:
    """Interaction ids of the graph's pending requests by the blueprint id of their task, once
    there are `count`."""

    async def probe() -> dict[str, str]:
        pending = (await view(http, graph_id))["pending_interactions"]
        return {p["content"]["task_id"]: p["interaction_id"] for p in pending}

    return await assert_eventually(
        probe, lambda p: len(p) >= count, within=120, interval=0.2, what="requests"
    )


async def submit(http: httpx.AsyncClient, tasks: list[dict[str, Any]], edges: Any = ()) -> dict[str, Any]:
    response = await http.post("/graphs", json={"blueprint": {"new_tasks": tasks, "new_edges": list(edges)}})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def completed_with(value: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    """Whether a task completed, its output carrying `value`'s nesting."""
    return lambda t: (
        t["status"] == "completed" and isinstance(t["output"], dict) and t["output"].get("n") == value["n"]
    )


Context = Any
Check = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class Door:
    """A route with a free JSON field, and how to see that a body sent to it was applied."""

    name: str
    field: tuple[str | int, ...]
    """Where the free field stands in the body; its value is level `len(field) + 1`."""
    prepare: Callable[[httpx.AsyncClient, int], Awaitable[Context]]
    """Makes what `count` bodies are sent to (a graph with that many tasks...)."""
    send: Callable[[httpx.AsyncClient, Context, int, Any], Awaitable[httpx.Response]]
    """Sends the `i`-th body with `value` in the field."""
    applied: Callable[[httpx.AsyncClient, Context, dict[int, Any]], Awaitable[None]]
    """Checks that each body sent (by `i`) was applied, and only those."""

    @property
    def offset(self) -> int:
        return len(self.field)


# POST /graphs: a graph per body, its one task echoing its input_data.


async def no_context(_http: httpx.AsyncClient, _count: int) -> Context:
    return {}


async def start_graph(http: httpx.AsyncClient, ctx: Context, i: int, value: Any) -> httpx.Response:
    body = {"blueprint": {"new_tasks": [task("t", input_data=value)]}}
    response = await http.post("/graphs", json=body)
    if response.status_code == 201:
        ctx[i] = response.json()["graph_id"]
    return response


async def graphs_ran(http: httpx.AsyncClient, ctx: Context, sent: dict[int, Any]) -> None:
    assert set(ctx) == set(sent)
    for i, value in sent.items():
        ran = completed_with(value)

        def check(tasks: dict[str, dict[str, Any]], ran: Check = ran) -> bool:
            return ran(tasks["t"])

        await tasks_once(http, ctx[i], check, f"graph {i} ran")


# POST /graphs/{id}/blueprint: new tasks added to a graph a gate keeps running.


async def held_graph(http: httpx.AsyncClient, _count: int) -> Context:
    return (await submit(http, [gated("hold")]))["graph_id"]


async def extend(http: httpx.AsyncClient, graph_id: Context, i: int, value: Any) -> httpx.Response:
    return await http.post(
        f"/graphs/{graph_id}/blueprint", json={"new_tasks": [task(f"x{i}", input_data=value)]}
    )


async def extensions_ran(http: httpx.AsyncClient, graph_id: Context, sent: dict[int, Any]) -> None:
    def check(tasks: dict[str, dict[str, Any]]) -> bool:
        added = {k for k in tasks if k.startswith("x")}
        return added == {f"x{i}" for i in sent} and all(
            completed_with(v)(tasks[f"x{i}"]) for i, v in sent.items()
        )

    await tasks_once(http, graph_id, check, "the added tasks ran")


# POST /graphs/{id}/interventions: each of many completed tasks rolled back once.


async def finished_tasks(http: httpx.AsyncClient, count: int) -> Context:
    created = await submit(http, [gated("hold"), *(task(f"r{i}", input_data={"i": i}) for i in range(count))])
    await tasks_once(
        http,
        created["graph_id"],
        lambda ts: all(ts[f"r{i}"]["status"] == "completed" for i in range(count)),
        "every task done",
    )
    return created


async def roll_back(http: httpx.AsyncClient, created: Context, i: int, value: Any) -> httpx.Response:
    body = {
        "intervention_type": "ROLLBACK_AND_MODIFY",
        "target_task_id": created["tasks"][f"r{i}"],
        "new_input_data": value,
        "comment": f"deeper {i}",
    }
    return await http.post(f"/graphs/{created['graph_id']}/interventions", json=body)


async def rollbacks_ran(http: httpx.AsyncClient, created: Context, sent: dict[int, Any]) -> None:
    def check(tasks: dict[str, dict[str, Any]]) -> bool:
        rolled = {int(k[1:]) for k, t in tasks.items() if k.startswith("r") and t["version"] == 2}
        return rolled == set(sent) and all(completed_with(v)(tasks[f"r{i}"]) for i, v in sent.items())

    await tasks_once(http, created["graph_id"], check, "the rolled back tasks ran again")


# POST /graphs/{id}/blueprint `update_tasks`: tasks waiting behind a gate, changed before they start.


async def waiting_tasks(http: httpx.AsyncClient, count: int) -> Context:
    ids = [f"w{i}" for i in range(count)]
    created = await submit(
        http, [gated("hold"), *(task(w, input_data={}) for w in ids)], [edge("hold", w) for w in ids]
    )
    created["gate"] = (await pending_once(http, created["graph_id"], 1))["hold"]
    return created


async def update_task(http: httpx.AsyncClient, created: Context, i: int, value: Any) -> httpx.Response:
    body = {"update_tasks": [{"task_id": created["tasks"][f"w{i}"], "new_input_data": value}]}
    return await http.post(f"/graphs/{created['graph_id']}/blueprint", json=body)


async def updates_ran(http: httpx.AsyncClient, created: Context, sent: dict[int, Any]) -> None:
    gid = created["graph_id"]
    opened = await http.post(f"/graphs/{gid}/interactions/{created['gate']}", json={"approved": True})
    assert opened.status_code == 200, opened.text

    def check(tasks: dict[str, dict[str, Any]]) -> bool:
        waiting = [t for k, t in tasks.items() if k.startswith("w")]
        return all(t["status"] == "completed" for t in waiting) and all(
            completed_with(v)(tasks[f"w{i}"]) for i, v in sent.items()
        )

    tasks = await tasks_once(http, gid, check, "the updated tasks ran")
    unchanged = [k for k, t in tasks.items() if k.startswith("w") and int(k[1:]) not in sent]
    assert all(tasks[k]["output"] in ({}, None, "") or "n" not in tasks[k]["output"] for k in unchanged)


# POST /graphs/{id}/interactions/{id}: gates decided with metadata, tool calls approved with edits.


async def gates(http: httpx.AsyncClient, count: int) -> Context:
    created = await submit(http, [gated(f"g{i}") for i in range(count)])
    return created["graph_id"], await pending_once(http, created["graph_id"], count)


async def decide_gate(http: httpx.AsyncClient, ctx: Context, i: int, value: Any) -> httpx.Response:
    graph_id, pending = ctx
    body = {"approved": True, "metadata": value}
    return await http.post(f"/graphs/{graph_id}/interactions/{pending[f'g{i}']}", json=body)


async def gates_opened(http: httpx.AsyncClient, ctx: Context, sent: dict[int, Any]) -> None:
    graph_id, pending = ctx

    def check(tasks: dict[str, dict[str, Any]]) -> bool:
        return all(tasks[f"g{i}"]["status"] == "completed" for i in sent)

    tasks = await tasks_once(http, graph_id, check, "the approved gates' tasks ran")
    still = (await view(http, graph_id))["pending_interactions"]
    assert {p["content"]["task_id"] for p in still} == {k for k in pending if int(k[1:]) not in sent}
    assert all(tasks[k]["status"] != "completed" for k in pending if int(k[1:]) not in sent)


def edited_call(levels: int) -> Any:
    return {"sql": DELETE, "n": nested(levels - 1)}


async def tool_calls(http: httpx.AsyncClient, count: int) -> Context:
    created = await submit(http, [task(f"c{i}", input_data={"sql": DELETE}) for i in range(count)])
    gid = created["graph_id"]

    async def probe() -> dict[str, str]:  # a task run asks: its workflow id holds the task's UUID
        pending = (await view(http, gid))["pending_interactions"]
        return {
            bp_id: p["interaction_id"]
            for p in pending
            for bp_id, uuid in created["tasks"].items()
            if f":task:{uuid}:" in p["task_id"]
        }

    return gid, await assert_eventually(
        probe, lambda p: len(p) == count, within=120, interval=0.2, what="asks"
    )


async def approve_edited(http: httpx.AsyncClient, ctx: Context, i: int, value: Any) -> httpx.Response:
    graph_id, pending = ctx
    body = {"approved": True, "response_data": {"arguments": value}}
    return await http.post(f"/graphs/{graph_id}/interactions/{pending[f'c{i}']}", json=body)


async def calls_ran(http: httpx.AsyncClient, ctx: Context, sent: dict[int, Any]) -> None:
    graph_id, pending = ctx
    await tasks_once(
        http,
        graph_id,
        lambda ts: all(ts[f"c{i}"]["status"] == "completed" for i in sent),
        "the approved calls ran",
    )
    still = {p["interaction_id"] for p in (await view(http, graph_id))["pending_interactions"]}
    assert still == {asked for k, asked in pending.items() if int(k[1:]) not in sent}


# POST /rule-offers: what "allow always" would save for a call's arguments (no workflow).


async def offer(http: httpx.AsyncClient, _ctx: Context, _i: int, value: Any) -> httpx.Response:
    return await http.post("/rule-offers", json={"tool": "mcp_thing", "arguments": value})


async def offers_made(_http: httpx.AsyncClient, _ctx: Context, _sent: dict[int, Any]) -> None:
    """Each offer answered 200 with its match (checked as sent)."""


DOORS = [
    Door(
        "graph input_data", ("blueprint", "new_tasks", 0, "input_data"), no_context, start_graph, graphs_ran
    ),
    Door("blueprint sent to a graph", ("new_tasks", 0, "input_data"), held_graph, extend, extensions_ran),
    Door("rollback new_input_data", ("new_input_data",), finished_tasks, roll_back, rollbacks_ran),
    Door("update_tasks", ("update_tasks", 0, "new_input_data"), waiting_tasks, update_task, updates_ran),
    Door("decision metadata", ("metadata",), gates, decide_gate, gates_opened),
    Door("decision response_data", ("response_data", "arguments"), tool_calls, approve_edited, calls_ran),
    Door("rule offer arguments", ("arguments",), no_context, offer, offers_made),
]


def value_for(door: Door, levels: int) -> Any:
    return edited_call(levels) if door.name == "decision response_data" else nested(levels)


def every_depth(door: Door, limit: int, far: tuple[int, ...] = FAR) -> list[int]:
    """Every depth from the door's field's first level to `limit + 1`, then `far`."""
    return [*range(door.offset + 1, limit + 2), *far]


def around_the_limit(door: Door, limit: int) -> list[int]:
    """The field's first level, half the limit, the limit and the levels either side, then `FAR`."""
    near = {door.offset + 1, limit // 2, limit - 1, limit, limit + 1, limit + 2}
    return [*sorted(d for d in near if d > door.offset), *FAR]


async def sweep(http: httpx.AsyncClient, door: Door, limit: int, depths: list[int]) -> None:
    """Send `door` a body at each of `depths`: within the limit each is taken (2xx) and applied,
    past it each is a 422 naming the path."""
    ctx = await door.prepare(http, len(depths))
    sent: dict[int, Any] = {}
    for i, depth in enumerate(depths):
        value = value_for(door, depth - door.offset)
        response = await door.send(http, ctx, i, value)
        if depth <= limit:
            assert response.status_code in (200, 201), (door.name, depth, response.text)
            sent[i] = value
            continue
        assert response.status_code == 422, (door.name, depth, response.text)
        problem = response.json()["errors"][0]
        assert problem["type"] == "json_too_deep"
        assert problem["loc"] == ["body", *door.field, *["n"] * (limit - door.offset)], (door.name, depth)
        detail = response.json()["detail"]
        assert f"nested deeper than {limit} levels" in detail and "SYNAPSE_MAX_JSON_DEPTH" in detail
    await door.applied(http, ctx, sent)


@pytest.mark.parametrize("door", DOORS, ids=[d.name for d in DOORS])
async def test_up_to_the_limit_a_body_is_applied_and_past_it_is_a_422_naming_the_path(
    http: httpx.AsyncClient, door: Door
) -> None:
    await sweep(http, door, LIMIT, around_the_limit(door, LIMIT))


async def test_every_depth_up_to_the_limit_is_taken_and_past_it_is_a_422_naming_the_path(
    http: httpx.AsyncClient,
) -> None:
    door = DOORS[-1]  # no workflow behind it: each body is answered as it is sent
    assert door.name == "rule offer arguments"
    await sweep(http, door, LIMIT, every_depth(door, LIMIT))


async def test_a_body_too_deep_for_any_parser_is_the_same_422(http: httpx.AsyncClient) -> None:
    depth = 100_000  # Python's JSON parser gives up long before; the body is still under 1 MiB
    body = b'{"new_input_data":' + b'{"n":' * depth + b"1" + b"}" * (depth + 1)
    response = await http.post(
        "/graphs/00000000-0000-0000-0000-000000000000/interventions",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["loc"] == ["body", "new_input_data", *["n"] * (LIMIT - 1)]


async def test_bodies_that_are_not_json_are_not_held_to_it(http: httpx.AsyncClient) -> None:
    data = b"[{" * 500  # a file, not JSON
    stored = await http.post("/artifacts", content=data, headers={"content-type": "application/octet-stream"})
    assert stored.status_code == 201, stored.text
    read = await http.get(f"/artifacts/{stored.json()['artifact_id']}")
    assert read.status_code == 200 and read.content == data


async def test_an_update_its_worker_cannot_decode_is_refused_as_invalid_not_failed(
    http: httpx.AsyncClient, client: Client, settings: Settings
) -> None:
    """Past the door (a caller of the call layer, or an API and a worker of different versions), an
    update whose argument the worker cannot read is `Invalid` (422), never an unknown failure (500)."""
    created = await submit(http, [gated("hold"), task("first")])
    gid = created["graph_id"]
    await tasks_once(http, gid, lambda ts: ts["first"]["status"] == "completed", "first done")
    rollback = GraphIntervention(
        intervention_type="ROLLBACK_AND_MODIFY",
        target_task_uuid=created["tasks"]["first"],
        new_input_data=nested(219),  # 220 levels with its object: more than the worker reads
        comment="deep",
        principal="olga",
    )
    with pytest.raises(Invalid) as refused:
        await graph_calls.update_or_reopen(
            client, settings, gid, TaskGraphWorkflow.intervene_checked, rollback
        )
    words = str(refused.value)
    assert words.startswith(f"graph '{gid}' could not read it") and "recursion limit exceeded" in words, words
    first = (await tasks_once(http, gid, lambda ts: True, "the graph"))["first"]
    assert first["version"] == 1 and first["status"] == "completed", "nothing was applied"
    assert (await http.post(f"/graphs/{gid}/pause")).status_code == 200, "the graph goes on"
