"""With SYNAPSE_CODEC_KEYS set, nothing a person or a tool said is in clear under the data dir or in
the INFO log: a unique word is planted through every path (a message, a SQL output, a result over
the inline limit, an upload, a question and its answer, a rule's reason, a terminal command and
its output, a Lark and a DingTalk message) into the real API, worker and channel stand-ins, then
every file under the data dir (SQLite files, their WAL and SHM, scratch folders) and every
captured log line are searched for each word."""

from __future__ import annotations

import base64
import logging
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from contracts import SandboxProfile
from core.settings import Settings, TemporalSettings
from tests.fakes.dingtalk_open_api import MESSAGE_TOPIC, FakeDingTalk, dingtalk_open_api
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, lark_open_api
from worker import build_worker

from ..conftest import assert_eventually
from ..support import serve, terminal_settings
from .dingtalk.conftest import dingtalk_settings
from .lark.conftest import ENCRYPT_KEY, TOKEN, lark_settings
from .test_sessions import decide, new_key

CODEC_KEYS = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
BIG_ROWS = 600
"""Rows of the big SELECT: each repeats its planted word, together well over the 16 KiB inline limit."""


def planted(path: str) -> str:
    """A word found nowhere else, naming the path it was planted through."""
    return f"{path}{uuid.uuid4().hex[:16]}"


@pytest.fixture
async def lark_api() -> AsyncIterator[FakeLarkOpenApi]:
    async with lark_open_api() as fake:
        yield fake


@pytest.fixture
async def dingtalk() -> AsyncIterator[FakeDingTalk]:
    async with dingtalk_open_api() as fake:
        yield fake


@pytest.fixture
def settings(tmp_path: Path, task_queue: str, lark_api: FakeLarkOpenApi, dingtalk: FakeDingTalk) -> Settings:
    """Codec keys, both chat channels on their stand-ins, a terminal working in a folder outside the
    data dir (what its commands write there is the person's, not Synapse's; no sandbox: the
    sandboxes have their own tests)."""
    base = terminal_settings(tmp_path, task_queue, terminal_sandbox=SandboxProfile.FULL)
    return base.model_copy(
        update={
            "data_dir": tmp_path / "data",
            "temporal": TemporalSettings(task_queue=task_queue, codec_keys=CODEC_KEYS),
            "lark": lark_settings(tmp_path, task_queue, lark_api).lark,
            "dingtalk": dingtalk_settings(tmp_path, task_queue, dingtalk).dingtalk,
        }
    )


@pytest.fixture
async def http(
    client: Client, settings: Settings, caplog: pytest.LogCaptureFixture
) -> AsyncIterator[httpx.AsyncClient]:
    """The real app and worker, every INFO line of both captured."""
    caplog.set_level(logging.INFO)
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as served:
        yield served


async def said(http: httpx.AsyncClient, key: str, content: str) -> dict[str, Any]:
    """Send `content` and wait for the turn (the answer, or what it waits for)."""
    sent = await http.post(
        f"/sessions/{key}/messages", params={"wait": "true"}, json={"content": content, "principal": "alice"}
    )
    assert sent.status_code in (200, 202), sent.text
    body: dict[str, Any] = sent.json()
    return body


async def answered(http: httpx.AsyncClient, key: str, word: str) -> None:
    """Wait until an assistant message of the session holds `word`."""

    async def messages() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await http.get(f"/sessions/{key}")).json()["messages"]
        return found

    await assert_eventually(
        messages,
        lambda found: any(m["role"] == "assistant" and word in str(m["content"]) for m in found),
        within=60,
        what=f"an answer holding {word} in {key}",
    )


async def plant_everywhere(
    http: httpx.AsyncClient, lark_api: FakeLarkOpenApi, dingtalk: FakeDingTalk
) -> list[str]:
    """Drive every path once, each with its own word; the words, once every path has stored it."""
    words: list[str] = []

    message = planted("message")
    words.append(message)
    assert (await said(http, new_key(), f"please note {message} for later"))["status"] == "completed"

    output = planted("output")
    words.append(output)
    selected = await said(http, new_key(), f"SELECT '{output}' AS secret")
    assert output in selected["answer"], selected

    big = planted("big")
    words.append(big)
    rows = f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {BIG_ROWS}) "
    offloaded = await said(http, new_key(), f"{rows}SELECT i, '{big}' AS secret FROM n")
    assert offloaded["status"] == "completed" and "is artifact art_" in offloaded["answer"], offloaded

    upload = planted("upload")
    words.append(upload)
    stored = await http.post(
        "/artifacts",
        params={"name": "notes.txt"},
        content=f"notes: {upload}",
        headers={"content-type": "text/plain"},
    )
    assert stored.status_code == 201, stored.text
    assert (await http.get(f"/artifacts/{stored.json()['artifact_id']}")).text == f"notes: {upload}"

    question, answer = planted("question"), planted("answer")
    words += [question, answer]
    asking = new_key()
    waiting = await said(http, asking, f"ask: {question}?")
    assert waiting["status"] == "waiting", waiting
    interaction = waiting["pending"]["interaction_id"]
    decided = await decide(
        http, asking, interaction, approved=True, principal="alice", response_data={"text": answer}
    )
    assert decided.status_code == 200, decided.text
    await answered(http, asking, answer)

    reason = planted("reason")
    words.append(reason)
    rule = {
        "tool": "terminal",
        "decision": "deny",
        "scope": "global",
        "match": {"command_prefix": f"rm {reason}"},
        "reason": f"never remove {reason}",
    }
    saved = await http.post("/rules", json=rule)
    assert saved.status_code == 201, saved.text
    assert (await http.get(f"/rules/{saved.json()['rule_id']}")).json()["reason"] == f"never remove {reason}"

    command = planted("command")
    words.append(command)
    terminal = new_key()
    proposed = await said(http, terminal, f"!echo {command} > said.txt && cat said.txt")
    assert proposed["status"] == "waiting", proposed  # it writes: approved, so it has a claim
    ran = await decide(http, terminal, proposed["pending"]["interaction_id"], approved=True, principal="bob")
    assert ran.status_code == 200 and ran.json()["tool_result"]["content"]["output"] == f"{command}\n", (
        ran.text
    )

    lark_text = planted("lark")
    words.append(lark_text)
    chat = f"oc_{uuid.uuid4().hex[:16]}"
    events = LarkEvents(verification_token=TOKEN, encrypt_key=ENCRYPT_KEY)
    message_id = lark_api.user_message(chat, f"remember {lark_text}", open_id="ou_alice")
    body, headers = events.request(
        events.text(chat, "ou_alice", f"remember {lark_text}", message_id=message_id)
    )
    delivered = await http.post("/channels/lark/events", content=body, headers=headers)
    assert delivered.status_code == 200, delivered.text
    await answered(http, f"lark:{chat}", lark_text)

    dingtalk_text = planted("dingtalk")
    words.append(dingtalk_text)
    conversation = f"cid{uuid.uuid4().hex[:12]}"
    frame = await dingtalk.push(
        MESSAGE_TOPIC, dingtalk.bot_message(f"remember {dingtalk_text}", conversation=conversation)
    )
    assert (await dingtalk.ack(frame))["code"] == 200
    await answered(http, f"dingtalk:{conversation}", dingtalk_text)
    return words


def holding(data_dir: Path, words: list[str]) -> dict[str, list[str]]:
    """Each file under `data_dir` that holds any of `words`, and which."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if hits := [w for w in words if w.encode() in data]:
            found[str(path.relative_to(data_dir))] = hits
    return found


async def test_no_planted_word_is_in_clear_under_the_data_dir_or_in_the_log(
    http: httpx.AsyncClient,
    settings: Settings,
    lark_api: FakeLarkOpenApi,
    dingtalk: FakeDingTalk,
    caplog: pytest.LogCaptureFixture,
) -> None:
    words = await plant_everywhere(http, lark_api, dingtalk)

    names = {p.name for p in settings.data_dir.iterdir()}
    assert {"artifacts.db", "rules.db", "terminal.db", "channels.db", "experience.db"} <= names, names
    found = holding(settings.data_dir, words)
    assert not found, f"in clear: {found}"
    assert settings.tools.terminal_cwd is not None
    assert holding(settings.tools.terminal_cwd, words) == {"said.txt": [words[-3]]}, (
        "the control: the search finds the command's word in the file the command wrote"
    )
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "running terminal" in logged, "the control: the worker's INFO lines were captured"
    assert [w for w in words if w in logged] == []
