"""With SYNAPSE_CODEC_KEYS set, the experience index that a real worker writes keeps no word of what
was asked or answered, and `GET /experience` still recalls a turn by one of its words."""

from __future__ import annotations

import base64
import os
import uuid
from typing import Any

import httpx
import pytest

from core.settings import Settings

from ..conftest import assert_eventually
from ..faults.flows import ask, wait_answer
from .test_sessions import new_key

CODEC_KEYS = f"k1:{base64.b64encode(os.urandom(32)).decode()}"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"temporal": settings.temporal.model_copy(update={"codec_keys": CODEC_KEYS})}
    )


def planted() -> str:
    return f"planted{uuid.uuid4().hex}"


async def recalled(http: httpx.AsyncClient, word: str) -> list[dict[str, Any]]:
    """What `GET /experience` recalls for `word`, once it recalls something."""

    async def recall() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await http.get("/experience", params={"query": word})).json()
        return found

    return await assert_eventually(recall, bool, within=60, what=f"a turn holding {word} recalled")


async def test_turns_are_recalled_by_their_words_but_none_is_stored_in_clear(
    http: httpx.AsyncClient, settings: Settings
) -> None:
    message, selected = planted(), planted()
    chat, query = new_key(), new_key()
    await ask(http, chat, f"please note {message} for later")
    await ask(http, query, f"SELECT '{selected}' AS secret")
    await wait_answer(http, chat)
    await wait_answer(http, query)

    [by_message] = await recalled(http, message.upper())
    [by_output] = await recalled(http, selected)

    assert by_message["question"] == f"please note {message} for later"
    assert by_output["question"] == f"SELECT '{selected}' AS secret"
    assert selected in by_output["answer"], "the tool's output, in the agent's answer, is recalled opened"
    files = sorted(settings.data_dir.glob("experience.db*"))
    assert {f.name for f in files} >= {"experience.db", "experience.db-wal"}
    stored = b"".join(f.read_bytes() for f in files)
    assert message.encode() not in stored and selected.encode() not in stored
