"""A Lark chat whose session was cancelled: a message is answered with who cancelled it and how to
go on, and starts nothing; `/restart` starts a new conversation in the chat."""

from __future__ import annotations

import httpx
from temporalio.client import Client

from api.calls import sessions
from api.chat.conversations import RESTART_COMMAND, RESTARTED_TEXT
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, FakeMessage
from workflows.identity.ids import session_workflow_id

from .test_inbound import new_chat, say, user_messages


async def replies_to(lark_api: FakeLarkOpenApi, message_id: str) -> list[FakeMessage]:
    """What the app answered to one message, once it has."""

    async def probe() -> list[FakeMessage]:
        return [m for m in lark_api.sent() if m.reply_to == message_id]

    return await assert_eventually(probe, lambda found: len(found) == 1, what=f"a reply to {message_id}")


async def test_a_cancelled_chat_says_so_and_restarts_only_when_asked(
    http: httpx.AsyncClient, client: Client, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    key = f"lark:{chat}"
    await say(http, lark, lark_api, chat, "hello synapse")
    await user_messages(http, key)
    lark_api.fail_next(500, 1000004, "internal error")  # the chat's last message is retried: it closes slowly
    cancelled = await http.post(f"/sessions/{key}/cancel", json={"reason": "done here", "principal": "ops"})
    assert cancelled.status_code == 200, cancelled.text
    handle = client.get_workflow_handle(session_workflow_id(key))
    run_id = (await handle.describe()).run_id
    ended = await sessions.ended_run(client, key)
    assert ended is not None and ended.cancelled, "cancelled from the answer on, while it closes too"

    event = await say(http, lark, lark_api, chat, "are you there?")

    [reply] = await replies_to(lark_api, event["event"]["message"]["message_id"])
    text = reply.content["text"]
    assert text.startswith("This conversation was cancelled by ops at ") and "UTC (done here)" in text
    assert f"Send {RESTART_COMMAND} to start a new conversation" in text
    assert (await handle.describe()).run_id == run_id, "the message started no new run"
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "cancelled"

    restart = await say(http, lark, lark_api, chat, RESTART_COMMAND)

    [started] = await replies_to(lark_api, restart["event"]["message"]["message_id"])
    assert started.content == {"text": RESTARTED_TEXT}
    session = (await http.get(f"/sessions/{key}")).json()
    assert (session["status"], session["channel"], session["messages"]) == ("active", "lark", [])
    assert (await handle.describe()).run_id != run_id
    await say(http, lark, lark_api, chat, "hello again")
    [message] = await user_messages(http, key)
    assert message["content"] == "hello again", "the new conversation takes messages"
