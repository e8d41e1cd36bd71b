"""Artifacts under keys scoped to projects: an artifact belongs to the projects it was uploaded for
and to the projects of the workflows that stored it; a key of another project reads it as missing,
and may not hand it to an agent of its own (a message's attachment, a blueprint's context)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import TaskChunkType, ToolUsed
from core.settings import Settings

from ..conftest import assert_eventually
from ..support import collect_events, events
from ..workflows.graph.flows import gated, task
from .test_project_scope import BEA, BOTH, ROOT, SAM, scoped_api


@pytest.fixture
async def http(client: Client, settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    """The API with the keys of `test_project_scope` (sam: shop, bea: billing, bo: both, ada: all)."""
    async with scoped_api(client, settings) as served:
        yield served


async def upload(
    http: httpx.AsyncClient, content: bytes, headers: dict[str, str], **params: str
) -> httpx.Response:
    """`POST /artifacts` of `content` as text."""
    return await http.post(
        "/artifacts", content=content, params=params, headers={**headers, "content-type": "text/plain"}
    )


async def uploaded(http: httpx.AsyncClient, content: bytes, headers: dict[str, str], **params: str) -> str:
    """The id of `content` uploaded (201)."""
    answer = await upload(http, content, headers, **params)
    assert answer.status_code == 201, answer.text
    artifact_id: str = answer.json()["artifact_id"]
    return artifact_id


async def readers(http: httpx.AsyncClient, artifact_id: str) -> dict[str, int]:
    """The status each key gets reading the artifact (404s checked to be a missing one's words)."""
    found = {}
    for name, headers in (("sam", SAM), ("bea", BEA), ("bo", BOTH), ("ada", ROOT)):
        answer = await http.get(f"/artifacts/{artifact_id}", headers=headers)
        if answer.status_code == 404:
            assert answer.json()["detail"] == f"no artifact {artifact_id!r}", answer.text
        found[name] = answer.status_code
    return found


def unique(label: str) -> bytes:
    """Content no other test stores (ids are content-addressed)."""
    return f"{label} {uuid.uuid4()}\n".encode()


async def test_an_upload_belongs_to_the_project_it_was_made_for(http: httpx.AsyncClient) -> None:
    shop = await uploaded(http, unique("shop price list"), SAM)
    assert await readers(http, shop) == {"sam": 200, "bea": 404, "bo": 200, "ada": 200}

    for_billing = await uploaded(http, unique("invoices"), ROOT, project="billing")
    assert await readers(http, for_billing) == {"sam": 404, "bea": 200, "bo": 200, "ada": 200}
    for_nobody = await uploaded(http, unique("ops notes"), ROOT)
    assert await readers(http, for_nobody) == {"sam": 404, "bea": 404, "bo": 404, "ada": 200}
    missing = "art_" + "0" * 64
    assert await readers(http, missing) == {"sam": 404, "bea": 404, "bo": 404, "ada": 404}


async def test_the_same_content_uploaded_by_two_projects_belongs_to_both(http: httpx.AsyncClient) -> None:
    content = unique("shared terms")
    shop = await uploaded(http, content, SAM)
    assert await readers(http, shop) == {"sam": 200, "bea": 404, "bo": 200, "ada": 200}
    assert await uploaded(http, content, BEA) == shop, "one content, one id"
    assert await readers(http, shop) == {"sam": 200, "bea": 200, "bo": 200, "ada": 200}


async def test_a_scoped_upload_names_one_of_its_projects(http: httpx.AsyncClient) -> None:
    several = await upload(http, b"either", BOTH)
    assert several.status_code == 422 and "several projects (billing, shop)" in several.json()["detail"]
    assert (await uploaded(http, unique("named"), BOTH, project="billing")).startswith("art_")
    elsewhere = await upload(http, b"elsewhere", SAM, project="billing")
    assert elsewhere.status_code == 403, elsewhere.text
    assert elsewhere.json()["detail"] == "project 'billing' is not one the key acts in (shop)"


async def test_another_projects_artifact_cannot_be_handed_to_an_agent(http: httpx.AsyncClient) -> None:
    theirs = await uploaded(http, unique("billing ledger"), BEA)
    ours = await uploaded(http, unique("shop ledger"), SAM)

    def context(artifact_id: str) -> dict[str, Any]:
        config = {"artifact_config": {"asset_id": artifact_id, "mode": "FULL"}}
        held = gated("read")  # waits at its gate: the graph runs while the test extends it
        return {"new_tasks": [{**held, "context_overrides": {"override_context_config": config}}]}

    key = f"shop-{uuid.uuid4().hex[:8]}"
    attached = await http.post(
        f"/sessions/{key}/messages", json={"content": "sum it", "artifacts": [theirs]}, headers=SAM
    )
    assert attached.status_code == 422 and f"no artifact {theirs!r}" in attached.text, attached.text
    named = await http.post("/graphs", json={"blueprint": context(theirs)}, headers=SAM)
    assert named.status_code == 422 and f"no artifact {theirs!r}" in named.text, named.text

    made = await http.post("/graphs", json={"blueprint": context(ours)}, headers=SAM)
    assert made.status_code == 201, made.text
    graph_id = made.json()["graph_id"]
    extended = await http.post(f"/graphs/{graph_id}/blueprint", json=context(theirs), headers=SAM)
    assert extended.status_code == 422 and f"no artifact {theirs!r}" in extended.text, extended.text
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": "sum it", "artifacts": [ours]}, headers=SAM
    )
    assert sent.status_code == 202, sent.text
    root = await http.post("/graphs", json={"blueprint": context(theirs), "project": "shop"}, headers=ROOT)
    assert root.status_code == 201, "a key without projects may name any artifact"


async def finished_artifact(
    http: httpx.AsyncClient, headers: dict[str, str], input_data: dict[str, Any]
) -> str:
    """The id of the artifact holding the whole answer of a one-task graph `headers`' key starts."""
    made = await http.post(
        "/graphs", json={"blueprint": {"new_tasks": [task("big", input_data=input_data)]}}, headers=headers
    )
    assert made.status_code == 201, made.text
    graph_id = made.json()["graph_id"]

    async def view() -> dict[str, Any]:
        answer = await http.get(f"/graphs/{graph_id}", headers=headers)
        assert answer.status_code == 200, answer.text
        shown: dict[str, Any] = answer.json()
        return shown

    done = await assert_eventually(view, lambda v: v["status"] == "completed", within=60, what="graph done")
    artifact = done["tasks"][0]["artifact"]
    assert artifact is not None, "a 20 kB answer is kept whole as an artifact, stored by the task's run"
    artifact_id: str = artifact["artifact_id"]
    return artifact_id


async def test_an_offloaded_answer_belongs_to_the_projects_of_the_graphs_that_stored_it(
    http: httpx.AsyncClient,
) -> None:
    long_answer = {"echo": "x" * 20_000, "tag": str(uuid.uuid4())}
    shop = await finished_artifact(http, SAM, long_answer)
    assert await readers(http, shop) == {"sam": 200, "bea": 404, "bo": 200, "ada": 200}
    assert await finished_artifact(http, ROOT, long_answer) == shop, "the same answer, the same artifact"
    assert await readers(http, shop) == {"sam": 200, "bea": 404, "bo": 200, "ada": 200}, "no project's"
    assert await finished_artifact(http, BEA, long_answer) == shop
    assert await readers(http, shop) == {"sam": 200, "bea": 200, "bo": 200, "ada": 200}


OFFLOADED = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
    "SELECT i, printf('%.320c', 's') AS filler FROM n"
)
"""A result over the 16 KiB history keeps: the worker stores it as an artifact of the session."""


async def test_a_sessions_large_result_belongs_to_the_sessions_project(http: httpx.AsyncClient) -> None:
    key = f"shop-{uuid.uuid4().hex[:8]}"
    sent = await http.post(f"/sessions/{key}/messages", json={"content": OFFLOADED}, headers=SAM)
    assert sent.status_code == 202, sent.text
    chunks = await collect_events(
        http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE, headers=SAM, within=60
    )
    [used] = events(chunks, ToolUsed)
    assert used.result.artifact is not None
    offloaded = used.result.artifact.artifact_id
    assert await readers(http, offloaded) == {"sam": 200, "bea": 404, "bo": 200, "ada": 200}
