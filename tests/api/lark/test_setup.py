"""Turning the Lark channel on: settings checks, routes, the SDK's own checks, long-connection mode."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import lark_oapi as lark
import pytest

from api.lark.inbound import LarkInbound
from api.lark.routes import LarkConfigError
from api.lark.webhook import raw_request
from api.main import create_app
from core.agent_registry import load_registry
from core.settings import Settings
from tests.fakes.lark_events import LarkEvents

LARK_PATHS = {"/channels/lark/events", "/channels/lark/card"}


def lark_settings(tmp_path: Path, **values: str) -> Settings:
    lark = {key.removeprefix("lark_"): value for key, value in values.items()}
    return Settings(data_dir=tmp_path, lark=lark, _env_file=None)


def paths(settings: Settings) -> set[str]:
    return set(create_app(settings).openapi()["paths"])


def test_the_channel_is_mounted_only_when_an_app_id_is_set(tmp_path: Path) -> None:
    assert not LARK_PATHS & paths(lark_settings(tmp_path))
    on = lark_settings(tmp_path, lark_app_id="cli_1", lark_app_secret="s", lark_verification_token="t")
    assert paths(on) >= LARK_PATHS


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({}, ["LARK_APP_SECRET and LARK_VERIFICATION_TOKEN are not set"]),
        ({"lark_app_secret": "s"}, ["LARK_VERIFICATION_TOKEN is not set"]),
        ({"lark_verification_token": "t"}, ["LARK_APP_SECRET is not set"]),
        ({"lark_mode": "websocket"}, ["LARK_APP_SECRET is not set"]),
        ({"lark_app_secret": "s", "lark_mode": "poll"}, ["LARK_MODE is 'poll'", "webhook, websocket"]),
    ],
)
def test_missing_settings_stop_the_app_and_are_named(
    tmp_path: Path, values: dict[str, str], named: list[str]
) -> None:
    with pytest.raises(LarkConfigError) as caught:
        create_app(lark_settings(tmp_path, lark_app_id="cli_1", **values))
    for words in named:
        assert words in str(caught.value)


def test_the_sdk_alone_answers_a_forged_signature_with_500(tmp_path: Path) -> None:
    """Why the endpoint checks signatures itself: the dispatcher would tell Lark to retry."""
    settings = lark_settings(
        tmp_path, lark_app_id="cli_1", lark_app_secret="s", lark_verification_token="t", lark_encrypt_key="k"
    )
    inbound = LarkInbound(settings, load_registry(settings))
    events = LarkEvents(verification_token="t", encrypt_key="k")
    body, headers = events.request(events.url_verification("c-1"))
    answer = inbound.dispatcher.do(raw_request("/channels/lark/events", body, headers))
    assert (answer.status_code, json.loads(answer.content or b"")) == (200, {"challenge": "c-1"})
    body, headers = events.request(events.text("oc_1", "ou_a", "hi"))
    forged = raw_request("/channels/lark/events", body, {**headers, "X-Lark-Signature": "0" * 64})
    assert inbound.dispatcher.do(forged).status_code == 500


async def test_long_connection_mode_builds_the_sdk_client(tmp_path: Path) -> None:
    settings = lark_settings(
        tmp_path,
        lark_app_id="cli_1",
        lark_app_secret="s",
        lark_mode="websocket",
        lark_domain="http://127.0.0.1:9",
    )
    inbound = LarkInbound(settings, load_registry(settings))
    ws = inbound.long_connection()
    assert isinstance(ws, lark.ws.Client)
    assert (ws._app_id, ws._domain, ws._event_handler) == ("cli_1", "http://127.0.0.1:9", inbound.dispatcher)
    app = create_app(settings)  # no lifespan here: the long connection is not started
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://synapse") as http:
        response = await http.post("/channels/lark/events", json={"type": "url_verification"})
    assert response.status_code == 404
    assert "long connection" in response.json()["detail"]
