"""Fixtures of the Lark channel tests: the Open API stand-in, settings with the channel on, the app's events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.settings import LarkSettings, Settings, TemporalSettings
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, lark_open_api

TOKEN = "vt-synapse-test"
ENCRYPT_KEY = "ek-synapse-test-0123456789"
ADMIN = "ou_admin"
ALICE = "ou_alice"


@pytest.fixture
async def lark_api() -> AsyncIterator[FakeLarkOpenApi]:
    """The Lark Open API stand-in the app's SDK client talks to."""
    async with lark_open_api() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, lark_api: FakeLarkOpenApi) -> Settings:
    """The test's settings with the Lark channel on (webhook mode, encrypted and signed)."""
    return lark_settings(tmp_path, task_queue, lark_api)


def lark_settings(tmp_path: Path, task_queue: str, lark_api: FakeLarkOpenApi) -> Settings:
    """Settings with the Lark channel on, talking to the stand-in `lark_api`."""
    return Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue),
        lark=LarkSettings(
            app_id=lark_api.app_id,
            app_secret=lark_api.app_secret,
            verification_token=TOKEN,
            encrypt_key=ENCRYPT_KEY,
            domain=lark_api.base_url,
            admins=f" {ADMIN} , ",
        ),
        _env_file=None,
    )


@pytest.fixture
def lark() -> LarkEvents:
    """What the Lark app configured in `settings` sends."""
    return LarkEvents(verification_token=TOKEN, encrypt_key=ENCRYPT_KEY)
