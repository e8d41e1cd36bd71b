"""Artifacts end to end: a large tool result becomes a preview plus a complete artifact, uploads
are attached to messages, and recall shows past turns."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from urllib.parse import unquote

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.main import create_app
from contracts import TaskChunkType, ToolUsed, TurnAnswered
from core.connect import synapse_converter
from core.settings import Settings
from worker import build_worker

from ..fakes.s3 import FakeBucket
from ..support import collect_events, events, serve

MB = 1024 * 1024
BIG_SELECT = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) "
    "SELECT i, printf('%.320c', 'r') AS filler FROM n"
)


def new_key() -> str:
    return f"art-{uuid.uuid4().hex[:10]}"


async def big_select_answers_with_a_preview_and_a_complete_artifact(http: httpx.AsyncClient) -> str:
    """Run the 3 MB SELECT in a new session, check its preview and artifact; the artifact id."""
    key = new_key()
    assert (await http.post(f"/sessions/{key}/messages", json={"content": BIG_SELECT})).status_code == 202
    chunks = await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE, within=60)
    [used] = events(chunks, ToolUsed)
    result = used.result.model_dump(mode="json")
    assert result["artifact"] is not None and result["artifact"]["size_bytes"] > 3 * MB
    assert len(json.dumps(result["content"])) < 20 * 1024, "history and the stream carry a preview"
    assert 0 < len(result["content"]["rows"]) < 10000
    assert result["artifact"]["artifact_id"] in result["content"]["note"]
    answer = str(events(chunks, TurnAnswered)[0].answer).splitlines()
    assert answer[0] == "SELECT returned 10000 rows:"
    assert answer[-1] == f"({result['content']['note']})"
    assert result["content"]["note"] == (
        f"showing the first {len(result['content']['rows'])} of 10000 rows; the whole result "
        f"({result['artifact']['size_bytes']:,} bytes) is artifact {result['artifact']['artifact_id']}"
    )

    whole = await http.get(f"/artifacts/{result['artifact']['artifact_id']}")
    assert whole.status_code == 200 and whole.headers["content-type"].startswith("application/json")
    content = whole.json()
    assert len(content["rows"]) == 10000 and content["rows"][-1] == [10000, "r" * 320]
    assert (await http.get(f"/sessions/{key}")).status_code == 200
    artifact_id: str = result["artifact"]["artifact_id"]
    return artifact_id


async def test_a_3_mb_select_answers_with_a_preview_and_a_complete_artifact(http: httpx.AsyncClient) -> None:
    await big_select_answers_with_a_preview_and_a_complete_artifact(http)


@pytest.fixture
async def bucket_api(
    s3: FakeBucket, temporal_env: WorkflowEnvironment, settings: Settings
) -> AsyncIterator[httpx.AsyncClient]:
    """The API, a worker and a Temporal client all keeping artifacts in one S3 bucket."""
    in_bucket = settings.model_copy(update={"artifacts": s3.settings("synapse/")})
    client = await Client.connect(
        temporal_env.client.service_client.config.target_host, data_converter=synapse_converter(in_bucket)
    )
    async with build_worker(client, in_bucket), serve(create_app(in_bucket, client=client)) as http:
        yield http


async def test_with_a_bucket_configured_artifacts_live_in_it(
    bucket_api: httpx.AsyncClient, s3: FakeBucket, settings: Settings
) -> None:
    artifact_id = await big_select_answers_with_a_preview_and_a_complete_artifact(bucket_api)
    assert f"synapse/{artifact_id}" in s3.keys()
    uploaded = await bucket_api.post("/artifacts", content=b"a log", headers={"content-type": "text/plain"})
    assert f"synapse/{uploaded.json()['artifact_id']}" in s3.keys()
    assert not (settings.data_dir / "artifacts.db").exists(), "nothing is kept on this machine"


async def test_uploads_are_content_addressed_and_unknown_ids_are_404(http: httpx.AsyncClient) -> None:
    log = ("2026-11-22 ERROR disk full on /var\n" * 50_000).encode()
    first = await http.post(
        "/artifacts", content=log, params={"name": "app.log"}, headers={"content-type": "text/plain"}
    )
    again = await http.post("/artifacts", content=log, headers={"content-type": "text/plain"})
    assert first.status_code == again.status_code == 201
    assert first.json()["artifact_id"] == again.json()["artifact_id"]
    assert first.json()["size_bytes"] == len(log)
    got = await http.get(f"/artifacts/{first.json()['artifact_id']}")
    assert got.content == log and got.headers["content-type"].startswith("text/plain")
    missing = await http.get("/artifacts/art_" + "0" * 64)
    assert missing.status_code == 404 and missing.json() == {"detail": "no artifact 'art_" + "0" * 64 + "'"}
    unknown = await http.post(
        f"/sessions/{new_key()}/messages", json={"content": "look", "artifacts": ["art_" + "1" * 64]}
    )
    assert unknown.status_code == 422 and "no artifact" in unknown.json()["detail"]


async def test_any_name_is_served_back_in_a_valid_header(http: httpx.AsyncClient) -> None:
    name = '周报 "final"\\v2\n.txt'
    posted = await http.post(
        "/artifacts", content=b"weekly numbers", params={"name": name}, headers={"content-type": "text/plain"}
    )
    got = await http.get(f"/artifacts/{posted.json()['artifact_id']}")
    assert got.status_code == 200 and got.content == b"weekly numbers"
    disposition = got.headers["content-disposition"]
    assert disposition.startswith('inline; filename="__ _final__v2_.txt"')
    assert unquote(disposition.split("filename*=UTF-8''")[1]) == name


async def test_recall_returns_the_matching_past_turn(http: httpx.AsyncClient) -> None:
    key = new_key()
    await http.post(
        f"/sessions/{key}/messages",
        json={"content": "SELECT customer FROM orders WHERE id = 7", "principal": "carol"},
    )
    await collect_events(http, key, lambda c: c.chunk_type == TaskChunkType.COMPLETE)

    async def recalled() -> list[dict[str, object]]:
        found: list[dict[str, object]] = (
            await http.get("/experience", params={"query": "customer orders id = 7"})
        ).json()
        return found

    from ..conftest import assert_eventually

    matches = await assert_eventually(recalled, lambda m: bool(m), what="the turn indexed")
    [best] = matches
    assert best["owner_id"] == f"session:{key}" and best["asked_by"] == "carol"
    assert best["agent_id"] == "Agent:demo" and best["outcome"] == "answer"
    assert (best["question"], best["answer"]) == (
        "SELECT customer FROM orders WHERE id = 7",
        "SELECT returned 1 row:\ncustomer\nGrace",
    )
    assert (await http.get("/experience", params={"query": "zebra quantum"})).json() == []
