"""Turning the DingTalk channel on: settings checks at every entry point, routes, the webhook mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from api.dingtalk.webhook import signature
from api.main import create_app
from cli.main import main
from core.settings import ChannelConfigError, DingTalkSettings, Settings
from tests.fakes.dingtalk_open_api import FakeDingTalk

from .chat import new_group, user_messages
from .conftest import ALICE, dingtalk_settings

EVENTS = "/channels/dingtalk/events"


def paths(settings: Settings) -> set[str]:
    return set(create_app(settings).openapi()["paths"])


def test_the_channel_is_mounted_only_when_a_client_id_is_set(tmp_path: Path) -> None:
    assert EVENTS not in paths(Settings(data_dir=tmp_path, _env_file=None))
    on = DingTalkSettings(client_id="ding1", client_secret="s")
    assert EVENTS in paths(Settings(data_dir=tmp_path, dingtalk=on, _env_file=None))


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({}, "DINGTALK_CLIENT_SECRET is not set"),
        ({"client_secret": "s", "mode": "poll"}, "DINGTALK_MODE is 'poll'; expected one of stream, webhook"),
    ],
)
def test_the_app_will_not_start_without_what_it_needs(
    tmp_path: Path, values: dict[str, str], named: str
) -> None:
    settings = Settings(
        data_dir=tmp_path, dingtalk=DingTalkSettings(client_id="ding1", **values), _env_file=None
    )
    with pytest.raises(ChannelConfigError) as caught:
        create_app(settings)
    assert named in str(caught.value)


@pytest.mark.parametrize("command", [["up"], ["worker"], ["api"]])
def test_serving_commands_name_the_missing_secret(
    command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("DINGTALK_CLIENT_ID", "ding1")
    monkeypatch.delenv("DINGTALK_CLIENT_SECRET", raising=False)

    code = main(command)

    assert code == 2
    assert "DINGTALK_CLIENT_SECRET is not set" in capsys.readouterr().err


@pytest.fixture
def webhook_settings(tmp_path: Path, task_queue: str, dingtalk: FakeDingTalk) -> Settings:
    return dingtalk_settings(tmp_path, task_queue, dingtalk, mode="webhook")


def signed(secret: str, *, at: float | None = None) -> dict[str, str]:
    timestamp = str(int((time.time() if at is None else at) * 1000))
    return {"timestamp": timestamp, "sign": signature(timestamp, secret)}


@pytest.fixture
def settings(webhook_settings: Settings) -> Settings:
    """This module's app runs in webhook mode."""
    return webhook_settings


async def test_a_signed_webhook_message_reaches_its_session(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    group, key = new_group()
    message = dingtalk.bot_message("hello over http", conversation=group, sender=ALICE)

    answer = await http.post(EVENTS, json=message, headers=signed(dingtalk.client_secret))

    assert (answer.status_code, answer.json()) == (200, {})
    messages = await user_messages(http, key)
    assert [(m["content"], m["name"]) for m in messages] == [("hello over http", ALICE)]
    assert {s["topic"] for s in dingtalk.opened[0]["subscriptions"]} == {"/v1.0/card/instances/callback"}, (
        "in webhook mode the Stream connection carries card clicks only"
    )


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (lambda secret: signed("someone-else's-secret"), "does not match"),
        (lambda secret: signed(secret, at=time.time() - 600), "at most 300 s"),
        (lambda secret: {}, "missing the timestamp or sign header"),
        (lambda secret: {"timestamp": "yesterday", "sign": "x"}, "not milliseconds"),
    ],
)
async def test_a_forged_or_stale_webhook_request_is_refused(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk, headers: Callable[[str], dict[str, str]], why: str
) -> None:
    group, key = new_group()
    message = dingtalk.bot_message("let me in", conversation=group)

    answer = await http.post(EVENTS, json=message, headers=headers(dingtalk.client_secret))

    assert answer.status_code == 401 and why in answer.json()["detail"]
    assert (await http.get(f"/sessions/{key}")).status_code == 404


async def test_a_signed_body_that_is_not_json_is_a_400(
    http: httpx.AsyncClient, dingtalk: FakeDingTalk
) -> None:
    answer = await http.post(EVENTS, content=b"not json", headers=signed(dingtalk.client_secret))

    assert answer.status_code == 400 and "not JSON" in answer.json()["detail"]
