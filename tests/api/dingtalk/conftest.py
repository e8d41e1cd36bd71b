"""Fixtures of the DingTalk channel tests: the gateway and OpenAPI stand-in, settings with the channel on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.settings import DingTalkSettings, Settings, TemporalSettings
from tests.fakes.dingtalk_open_api import FakeDingTalk, dingtalk_open_api

ADMIN = "boss"
ALICE = "alice"
TEMPLATE = "tpl-synapse-approval.schema"


@pytest.fixture
async def dingtalk() -> AsyncIterator[FakeDingTalk]:
    """DingTalk's Stream gateway and OpenAPI, as the app's SDKs reach them."""
    async with dingtalk_open_api() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, dingtalk: FakeDingTalk) -> Settings:
    """The test's settings with the DingTalk channel on (Stream mode, an approval card template)."""
    return dingtalk_settings(tmp_path, task_queue, dingtalk)


def dingtalk_settings(tmp_path: Path, task_queue: str, fake: FakeDingTalk, **values: str) -> Settings:
    """Settings with the DingTalk channel on, talking to the stand-in `fake`."""
    fields = {
        "client_id": fake.client_id,
        "client_secret": fake.client_secret,
        "openapi_endpoint": fake.base_url,
        "card_template_id": TEMPLATE,
        "admins": f" {ADMIN} , ",
        **values,
    }
    return Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue),
        dingtalk=DingTalkSettings(**fields),
        _env_file=None,
    )
