"""With SYNAPSE_CODEC_KEYS, the conversation is not in Temporal's database file, not even in part.

A dev server of this test alone persists to a SQLite file. A session driven with the keys leaves
its secret literal nowhere in the file; a message signalled by a client without keys (the
control) is found there, so the search can find what is in clear.
"""

from __future__ import annotations

import asyncio
import base64
import os
import uuid
from pathlib import Path

from temporalio.client import Client

from api.calls import sessions as session_calls
from contracts import InboundMessage, SessionConfig
from core.connect import synapse_converter
from core.settings import Settings, TemporalSettings
from tests.conftest import assert_eventually
from worker import build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from .processes import Children, DevServer

SECRET = b"iban-DE44-5001-0517-5407-3249-31"
IN_CLEAR = b"written-in-clear-7f3a"


async def test_the_database_file_holds_no_literal_of_an_encrypted_conversation(
    children: Children, settings: Settings, tmp_path: Path
) -> None:
    keys = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
    encrypted = settings.model_copy(
        update={"temporal": TemporalSettings(task_queue=settings.temporal.task_queue, codec_keys=keys)}
    )
    server = DevServer(children, tmp_path / "temporal.db")
    plain = await server.start()
    async with asyncio.timeout(90):
        client = Client(
            plain.service_client, namespace=plain.namespace, data_converter=synapse_converter(encrypted)
        )
        key = f"at-rest-{uuid.uuid4().hex[:8]}"
        async with build_worker(client, encrypted):
            message = InboundMessage(content=f"remember {SECRET.decode()}", sender_id="alice", chat_id="t")
            await session_calls.send_message(
                client, settings.temporal.task_queue, SessionConfig(session_key=key), message
            )
            handle = client.get_workflow_handle(session_workflow_id(key))

            async def answers() -> int:
                session = await handle.query(SessionWorkflow.get_status)
                return sum(m.role == "assistant" for m in session.messages)

            await assert_eventually(answers, lambda n: n >= 1, what="the turn answered")
            control = InboundMessage(content=IN_CLEAR.decode(), sender_id="alice", chat_id="t")
            await session_calls.send_message(
                plain, settings.temporal.task_queue, SessionConfig(session_key=f"clear-{key}"), control
            )
        await server.stop()

    stored = await asyncio.to_thread(lambda: b"".join(p.read_bytes() for p in tmp_path.glob("temporal.db*")))
    assert stored.count(IN_CLEAR) > 0, "the control: a literal sent in clear is found"
    assert stored.count(SECRET) == 0
