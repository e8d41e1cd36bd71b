"""Encrypted payloads end to end: what Temporal stores is ciphertext, the API still reads it, and the
codec server opens it for the Web UI (its JSON contract, `X-Namespace`, CORS, API keys)."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from api.main import create_app
from core.codec import ENCODING
from core.connect import synapse_converter
from core.settings import ApiSettings, Settings, TemporalSettings
from tests.conftest import assert_eventually
from tests.support import serve
from worker import build_worker
from workflows.identity.ids import session_workflow_id

SECRET = "customer-x-4711"
"""A literal of the conversation that must never be stored in clear."""
KEY = "ops-key"
UI = "http://127.0.0.1:8233"


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    keys = TemporalSettings(
        task_queue=task_queue, codec_keys=f"k1:{base64.b64encode(os.urandom(32)).decode()}"
    )
    return Settings(
        data_dir=tmp_path, temporal=keys, api=ApiSettings(keys=f"{KEY}:ops:admin"), _env_file=None
    )


@pytest.fixture
async def encrypted(client: Client, settings: Settings) -> Client:
    """A client of the shared dev server with Synapse's converter: these settings' keys."""
    return Client(
        client.service_client, namespace=client.namespace, data_converter=synapse_converter(settings)
    )


@pytest.fixture
async def http(encrypted: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with build_worker(encrypted, settings), serve(create_app(settings, client=encrypted)) as http:
        http.headers["Authorization"] = f"Bearer {KEY}"
        yield http


async def _stored_payloads(client: Client, key: str) -> list[Payload]:
    """Every payload of the session's history, as Temporal stores it (read without the keys)."""
    found: list[Payload] = []

    def walk(message: object) -> None:
        if isinstance(message, Payload):
            found.append(message)
            return
        for field, value in message.ListFields():  # type: ignore[attr-defined]
            if field.message_type is None:
                continue
            if field.label == field.LABEL_REPEATED and not field.message_type.GetOptions().map_entry:
                for item in value:
                    walk(item)
            elif field.message_type.GetOptions().map_entry:
                for item in value.values():
                    if hasattr(item, "ListFields"):
                        walk(item)
            else:
                walk(value)

    history = await client.get_workflow_handle(session_workflow_id(key)).fetch_history()
    for event in history.events:
        if event.HasField("marker_recorded_event_attributes"):
            # The SDK's own bookkeeping stays plain (`workflow.patched` ids; a local activity's
            # sequence number, attempt and type, under "data"); a local activity's result is ours.
            for name, details in event.marker_recorded_event_attributes.details.items():
                if name != "data" and event.marker_recorded_event_attributes.marker_name != "core_patch":
                    walk(details)
            continue
        walk(event)
    return found


async def test_temporal_stores_ciphertext_while_the_api_reads_the_conversation(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = "codec-" + os.urandom(4).hex()
    sent = await http.post(f"/sessions/{key}/messages", json={"content": f"note: {SECRET}"})
    assert sent.status_code == 202, sent.text

    async def answered() -> str:
        session = (await http.get(f"/sessions/{key}")).json()
        return str(session.get("messages"))

    assert SECRET in await assert_eventually(
        answered, lambda m: m.count(SECRET) >= 1, what="the message read back"
    )
    stored = await _stored_payloads(client, key)
    data = [p for p in stored if "type" not in p.metadata]  # search attributes stay plain, for queries
    plain = [p for p in data if p.data and p.metadata.get("encoding") != ENCODING]
    assert data and not plain, plain
    assert not any(SECRET.encode() in p.data for p in stored)

    sealed = next(p for p in stored if p.data)
    wire = {
        "payloads": [
            {
                "metadata": {k: base64.b64encode(v).decode() for k, v in sealed.metadata.items()},
                "data": base64.b64encode(sealed.data).decode(),
            }
        ]
    }
    opened = await http.post("/codec/decode", json=wire, headers={"X-Namespace": client.namespace})
    assert opened.status_code == 200, opened.text
    [payload] = opened.json()["payloads"]
    assert base64.b64decode(payload["metadata"]["encoding"]) != ENCODING


async def test_encode_then_decode_round_trips(http: httpx.AsyncClient) -> None:
    plain = {
        "metadata": {"encoding": base64.b64encode(b"json/plain").decode()},
        "data": base64.b64encode(b'"hi"').decode(),
    }

    sealed = (await http.post("/codec/encode", json={"payloads": [plain]})).json()["payloads"]
    opened = (await http.post("/codec/decode", json={"payloads": sealed})).json()["payloads"]

    assert base64.b64decode(sealed[0]["metadata"]["encoding"]) == ENCODING
    assert opened == [plain]


@pytest.mark.parametrize(
    ("body", "headers", "status", "said"),
    [
        (
            {"payloads": [{"data": "***"}]},
            {},
            400,
            "payloads[0]: metadata values and data must be standard base64",
        ),
        ({"payloads": []}, {"X-Namespace": "elsewhere"}, 400, "this codec server serves namespace"),
        ({"payloads": []}, {"Authorization": ""}, 401, ""),
    ],
)
async def test_bad_requests_are_named(
    http: httpx.AsyncClient, body: dict[str, object], headers: dict[str, str], status: int, said: str
) -> None:
    answer = await http.post("/codec/decode", json=body, headers=headers)

    assert answer.status_code == status and said in answer.json()["detail"]


async def test_a_payload_that_does_not_open_is_a_400_naming_it(http: httpx.AsyncClient) -> None:
    forged = {
        "metadata": {
            "encoding": base64.b64encode(ENCODING).decode(),
            "encryption-key-id": base64.b64encode(b"k9").decode(),
        },
        "data": base64.b64encode(os.urandom(40)).decode(),
    }

    answer = await http.post("/codec/decode", json={"payloads": [forged]})

    assert (
        answer.status_code == 400
        and "payloads[0]: payload encrypted with key 'k9'" in answer.json()["detail"]
    )


async def test_the_web_ui_origin_may_call_from_the_browser_and_others_may_not(
    http: httpx.AsyncClient,
) -> None:
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-namespace",
    }

    allowed = await http.options("/codec/decode", headers={"Origin": UI, **preflight})
    other = await http.options("/codec/decode", headers={"Origin": "http://evil.example", **preflight})

    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == UI
    assert "access-control-allow-origin" not in other.headers


async def test_without_keys_there_is_no_codec_server(tmp_path: Path, client: Client) -> None:
    async with serve(create_app(Settings(data_dir=tmp_path, _env_file=None), client=client)) as plain:
        assert (await plain.post("/codec/decode", json={"payloads": []})).status_code == 404


async def test_a_key_scoped_to_projects_may_not_use_the_codec_server(
    encrypted: Client, settings: Settings
) -> None:
    scoped = settings.model_copy(
        update={"api": ApiSettings(keys=f"{KEY}:ops:admin,shop-key:sam:admin:projects=shop")}
    )
    async with serve(create_app(scoped, client=encrypted)) as http:
        plain = {"metadata": {"encoding": base64.b64encode(b"json/plain").decode()}, "data": "e30="}
        sealed = await http.post(
            "/codec/encode", json={"payloads": [plain]}, headers={"Authorization": f"Bearer {KEY}"}
        )
        for path, body in (("/codec/decode", sealed.json()), ("/codec/encode", {"payloads": [plain]})):
            refused = await http.post(path, json=body, headers={"Authorization": "Bearer shop-key"})
            assert refused.status_code == 403, refused.text
            assert "scoped to projects (shop)" in refused.json()["detail"]
            assert "payloads carry no project" in refused.json()["detail"]
        unscoped = await http.post(
            "/codec/decode", json=sealed.json(), headers={"Authorization": f"Bearer {KEY}"}
        )
        assert unscoped.status_code == 200 and unscoped.json()["payloads"] == [plain]
