"""Fixtures of the agent adapter tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.chat_completions import FakeChatCompletions, fake_chat_completions

from .endpoint import KEY, KEY_ENV


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeChatCompletions]:
    """The loopback OpenAI-compatible stand-in, its key in `KEY_ENV`."""
    monkeypatch.setenv(KEY_ENV, KEY)
    async with fake_chat_completions() as server:
        yield server
