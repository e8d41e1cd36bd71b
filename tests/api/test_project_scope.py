"""Keys scoped to projects: a key of `shop` sees and acts on `shop`'s sessions, graphs (a session's
too) and rules, and `billing`'s are 404 to it (listings leave them out), on every route that names
one."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.main import create_app
from contracts import GraphStarted, TaskChunkType
from core.settings import ApiSettings, Settings, TemporalSettings
from worker import build_worker
from workflows.identity.search_attributes import PROJECT

from ..conftest import assert_eventually
from ..support import asked, collect_events, events, serve
from ..workflows.graph.flows import gated
from .test_auth import bearer
from .test_session_graphs import BLUEPRINT, plan_message

KEYS = "k-shop:sam:approver:projects=shop,k-bill:bea:approver:projects=billing,k-both:bo:operator:projects=shop+billing,k-root:ada:admin"
SAM, BEA, BOTH, ROOT = bearer("k-shop"), bearer("k-bill"), bearer("k-both"), bearer("k-root")
NO_TASK = str(uuid.uuid4())


@dataclass(frozen=True)
class World:
    """One session and one graph in each project, and the API serving them."""

    http: httpx.AsyncClient
    session: dict[str, str]
    graph: dict[str, str]


@asynccontextmanager
async def scoped_api(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The API served with `KEYS` (sam: shop, bea: billing, bo: both, ada: every project)."""
    keyed = settings.model_copy(update={"api": ApiSettings(keys=KEYS)})
    async with serve(create_app(keyed, client=client)) as http:
        yield http


async def started_in_each_project(http: httpx.AsyncClient) -> World:
    """A new session and a new graph (held at a gate) in `shop` and in `billing`."""
    session, graph = {}, {}
    for project, headers in (("shop", SAM), ("billing", BEA)):
        key = f"{project}-{uuid.uuid4().hex[:8]}"
        started = await http.post("/sessions", json={"session_key": key}, headers=headers)
        assert started.status_code == 201, started.text
        session[project] = key
        made = await http.post("/graphs", json={"blueprint": {"new_tasks": [gated("hold")]}}, headers=headers)
        assert made.status_code == 201, made.text
        graph[project] = made.json()["graph_id"]
    return World(http, session, graph)


@pytest.fixture
async def world(client: Client, settings: Settings, worker: None) -> AsyncIterator[World]:
    async with scoped_api(client, settings) as http:
        yield await started_in_each_project(http)


@pytest.fixture(scope="module")
async def routes_api(
    temporal_env: WorkflowEnvironment, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[httpx.AsyncClient]:
    """One worker and scoped API for the route cases (one per route): each case's sessions and
    graphs are its own (`routes_world`), so a worker and an API of their own proved nothing more
    and cost a second of a loaded machine each."""
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("routes"),
        temporal=TemporalSettings(task_queue=f"tq-routes-{uuid.uuid4().hex[:8]}"),
        _env_file=None,
    )
    async with build_worker(temporal_env.client, settings), scoped_api(temporal_env.client, settings) as http:
        yield http


@pytest.fixture
async def routes_world(routes_api: httpx.AsyncClient) -> World:
    """A session and a graph of each project, new for the case, on the shared route API."""
    return await started_in_each_project(routes_api)


ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/sessions/{key}", None),
    ("GET", "/sessions/{key}/messages", None),
    ("GET", "/sessions/{key}/audit", None),
    ("GET", "/sessions/{key}/grants", None),
    ("DELETE", "/sessions/{key}/grants/grant_1", None),
    ("GET", "/sessions/{key}/events", None),
    ("POST", "/sessions/{key}/interactions/int_1", {"approved": True}),
    ("POST", "/sessions/{key}/messages", {"content": "hello"}),
    ("POST", "/sessions/{key}/turn/cancel", None),
    ("POST", "/sessions/{key}/pause", None),
    ("POST", "/sessions/{key}/resume", None),
    ("POST", "/sessions/{key}/cancel", None),
    ("GET", "/graphs/{graph_id}", None),
    ("GET", "/graphs/{graph_id}/tasks/{task_uuid}", None),
    ("GET", "/graphs/{graph_id}/tasks/{task_uuid}/events", None),
    ("GET", "/graphs/{graph_id}/diagram", None),
    ("GET", "/graphs/{graph_id}/audit", None),
    ("GET", "/graphs/{graph_id}/events", None),
    ("POST", "/graphs/{graph_id}/interactions/int_1", {"approved": True}),
    ("POST", "/graphs/{graph_id}/blueprint", {"blueprint": {"new_tasks": [gated("more")]}}),
    ("POST", "/graphs/{graph_id}/interventions", {"action": "pause"}),
    ("POST", "/graphs/{graph_id}/pause", None),
    ("POST", "/graphs/{graph_id}/resume", None),
    ("POST", "/graphs/{graph_id}/cancel", None),
]
"""Every route naming a session or a graph (the test checks the OpenAPI document lists no other),
reads first, what ends a workflow last."""


async def call(
    http: httpx.AsyncClient, method: str, path: str, body: Any, headers: dict[str, str]
) -> tuple[int, str]:
    """The status and body of one call (an event stream: its status and first bytes)."""
    async with http.stream(method, path, json=body, headers=headers) as answer:
        async for chunk in answer.aiter_text():
            return answer.status_code, chunk
        return answer.status_code, ""


def test_the_table_names_every_route_of_a_session_or_graph(settings: Settings) -> None:
    named = {
        (method.upper(), path)
        for path, operations in create_app(settings).openapi()["paths"].items()
        if "{key}" in path or "{graph_id}" in path
        for method in operations
    }
    tabled = {
        (method, template.replace("grant_1", "{grant_id}").replace("int_1", "{interaction_id}"))
        for method, template, _ in ROUTES
    }
    assert tabled == named


@pytest.mark.parametrize(("method", "template", "body"), ROUTES, ids=[f"{m} {t}" for m, t, _ in ROUTES])
async def test_a_shop_key_reaches_shop_and_billing_is_404(
    routes_world: World, method: str, template: str, body: dict[str, Any] | None
) -> None:
    world = routes_world

    def path(project: str) -> str:
        return template.format(key=world.session[project], graph_id=world.graph[project], task_uuid=NO_TASK)

    other_status, other = await call(world.http, method, path("billing"), body, SAM)
    name = "session" if template.startswith("/sessions") else "graph"
    assert other_status == 404, other
    assert f'"no {name} ' in other, other
    own_status, own = await call(world.http, method, path("shop"), body, SAM)
    assert own_status < 500 and f'"no {name} ' not in own, own
    billing_status, billing = await call(world.http, method, path("billing"), body, BEA)
    assert billing_status < 500 and f'"no {name} ' not in billing, "billing's own key still reaches it"


async def test_listings_show_a_scoped_key_only_its_projects(world: World) -> None:
    async def listed(path: str, headers: dict[str, str], field: str) -> set[str]:
        answer = await world.http.get(path, params={"limit": 500}, headers=headers)
        assert answer.status_code == 200, answer.text
        return {item[field] for item in answer.json()}

    for path, field, made in (
        ("/sessions", "session_key", world.session),
        ("/graphs", "graph_id", world.graph),
    ):
        ours = set(made.values())
        await assert_eventually(functools.partial(listed, path, ROOT, field), ours.issubset)
        assert ours & await listed(path, SAM, field) == {made["shop"]}
        assert ours & await listed(path, BEA, field) == {made["billing"]}
        assert ours & await listed(path, BOTH, field) == ours


async def test_what_a_scoped_key_starts_belongs_to_one_of_its_projects(world: World) -> None:
    http = world.http
    several = await http.post("/sessions", json={}, headers=BOTH)
    assert several.status_code == 422 and "several projects (billing, shop)" in several.json()["detail"]
    graph = await http.post("/graphs", json={"blueprint": {"new_tasks": [gated("g")]}}, headers=BOTH)
    assert graph.status_code == 422 and "name the one" in graph.json()["detail"]
    message = await http.post(
        f"/sessions/new-{uuid.uuid4().hex[:8]}/messages", json={"content": "hi"}, headers=BOTH
    )
    assert message.status_code == 422 and "POST /sessions" in message.json()["detail"]
    elsewhere = await http.post("/sessions", json={"project": "billing"}, headers=SAM)
    assert elsewhere.status_code == 403 and "project 'billing'" in elsewhere.json()["detail"]
    graph_elsewhere = await http.post(
        "/graphs", json={"blueprint": {"new_tasks": [gated("g")]}, "project": "billing"}, headers=SAM
    )
    assert graph_elsewhere.status_code == 403, graph_elsewhere.text
    taken = await http.post("/sessions", json={"session_key": world.session["billing"]}, headers=SAM)
    assert taken.status_code == 404, "another project's session key is not even said to exist"

    key = f"talk-{uuid.uuid4().hex[:8]}"
    sent = await http.post(f"/sessions/{key}/messages", json={"content": "hi"}, headers=SAM)
    assert sent.status_code == 202, sent.text
    assert (await http.get(f"/sessions/{key}", headers=SAM)).status_code == 200
    assert (await http.get(f"/sessions/{key}", headers=BEA)).status_code == 404
    named = await http.post("/sessions", json={"project": "billing"}, headers=BOTH)
    assert named.status_code == 201 and named.json()["project"] == "billing", named.text
    assert (await http.get(f"/sessions/{named.json()['session_id']}", headers=SAM)).status_code == 404
    unscoped = await http.post("/sessions", json={}, headers=ROOT)
    assert unscoped.status_code == 201, "a key without projects starts sessions of no project, as before"
    assert (await http.get(f"/sessions/{unscoped.json()['session_id']}", headers=SAM)).status_code == 404


async def test_a_scoped_key_sees_its_projects_rules_its_own_and_global_ones_read_only(world: World) -> None:
    http = world.http

    async def saved(headers: dict[str, str], **rule: Any) -> str:
        answer = await http.post("/rules", json={"tool": "sql", "decision": "allow", **rule}, headers=headers)
        assert answer.status_code == 201, answer.text
        rule_id: str = answer.json()["rule_id"]
        return rule_id

    shop = await saved(SAM, scope="project", project="shop")
    billing = await saved(BEA, scope="project", project="billing")
    everyone = await saved(ROOT, scope="global")
    sams = await saved(SAM, scope="user", user="sam")
    beas = await saved(BEA, scope="user", user="bea")
    seen = {rule["rule_id"] for rule in (await http.get("/rules", headers=SAM)).json()}
    assert {shop, everyone, sams} <= seen and not {billing, beas} & seen
    for hidden in (billing, beas):
        assert (await http.get(f"/rules/{hidden}", headers=SAM)).status_code == 404
        gone = await http.delete(f"/rules/{hidden}", headers=SAM)
        assert (
            gone.status_code == 404 and gone.json()["detail"] == f"no rule {hidden!r}; GET /rules lists them"
        )
    assert (await http.get(f"/rules/{everyone}", headers=SAM)).status_code == 200
    refused = await http.delete(f"/rules/{everyone}", headers=SAM)
    assert refused.status_code == 403, refused.text
    global_again = await http.post(
        "/rules", json={"tool": "sql", "decision": "allow", "scope": "global"}, headers=SAM
    )
    assert global_again.status_code == 403 and "scoped to projects (shop)" in global_again.json()["detail"]
    assert (await http.delete(f"/rules/{shop}", headers=SAM)).status_code == 200
    assert (await http.get(f"/rules/{billing}", headers=ROOT)).status_code == 200, "an unscoped key sees all"


async def test_a_sessions_graph_and_its_task_runs_belong_to_the_sessions_project(
    world: World, client: Client
) -> None:
    http, key = world.http, f"plan-{uuid.uuid4().hex[:8]}"
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT)}, headers=SAM
    )
    assert sent.status_code == 202, sent.text
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.TOOL_APPROVAL_REQUEST, headers=SAM, within=30
    )
    graph_id = events(chunks, GraphStarted)[0].graph_id
    view = await http.get(f"/graphs/{graph_id}", headers=SAM)
    assert view.status_code == 200, "reached through its session, a graph of no project of its own"
    collect = next(t for t in view.json()["tasks"] if t["task_id"] == "collect")
    assert collect["workflow_id"], "the task ran as a child of the graph"
    for path in (f"/graphs/{graph_id}", f"/graphs/{graph_id}/tasks/{collect['task_uuid']}"):
        assert (await http.get(path, headers=SAM)).status_code == 200, path
        assert (await http.get(path, headers=BEA)).status_code == 404, path
    gate = chunks[-1]
    refused = await http.post(
        f"/graphs/{graph_id}/interactions/{asked(gate).interaction_id}",
        json={"approved": True},
        headers=BEA,
    )
    assert refused.status_code == 404, "billing's key cannot even say it exists"
    decided = await http.post(
        f"/graphs/{graph_id}/interactions/{asked(gate).interaction_id}",
        json={"approved": True},
        headers=SAM,
    )
    assert decided.status_code == 200, decided.text

    async def status() -> str:
        answer = await http.get(f"/graphs/{graph_id}", headers=SAM)
        assert answer.status_code == 200, answer.text
        found: str = answer.json()["status"]
        return found

    await assert_eventually(status, lambda s: s == "completed", what="the session's graph completed")
    reopened = await http.post(
        f"/graphs/{graph_id}/blueprint", json={"new_tasks": [gated("again")]}, headers=SAM
    )
    assert reopened.status_code == 200, reopened.text
    described = await client.get_workflow_handle(f"graph:{graph_id}").describe()
    assert (described.parent_id, described.typed_search_attributes.get(PROJECT)) == (None, "shop"), (
        "reopened by the API, it has no parent any more: it keeps the session's project"
    )
    assert (await http.get(f"/graphs/{graph_id}", headers=BEA)).status_code == 404


async def test_a_session_started_again_stays_in_its_project(world: World, client: Client) -> None:
    key = world.session["shop"]
    handle = client.get_workflow_handle(f"session:{key}")
    await handle.terminate("the test ends its run")
    again = await world.http.post(f"/sessions/{key}/messages", json={"content": "hi again"}, headers=ROOT)
    assert again.status_code == 202 and again.json()["restarted"], again.text
    described = await handle.describe()
    assert described.typed_search_attributes.get(PROJECT) == "shop", "an unscoped key's message restarted it"
    assert (await world.http.get(f"/sessions/{key}", headers=SAM)).json()["project"] == "shop"
