"""Lark in, end to end: signed (and encrypted) events through the real SDK dispatcher, on the real
app served by uvicorn, a real worker and dev server; Lark's Open API is the loopback stand-in."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.channels.actions import Action, button_value
from activities.tools.runner import ToolActivities
from api.chat import clicks as chat_clicks
from api.lark import clicks as lark_clicks
from api.lark.inbound import CLICK_WAIT_SECONDS
from api.main import create_app
from contracts import TaskChunkType, ToolResult, ToolRun
from core.settings import Settings
from tests.api.test_busy_temporal import occupy_update_slots, release_update_slots
from tests.api.test_sessions import DELETE_CANCELLED, is_type
from tests.conftest import assert_eventually
from tests.fakes.lark_events import LarkEvents, mention, signed_headers
from tests.fakes.lark_open_api import FakeLarkOpenApi, FakeMessage
from tests.support import asked, collect_events, serve
from worker import build_worker
from workflows.identity.ids import session_workflow_id

from .conftest import ADMIN, ALICE, ENCRYPT_KEY, TOKEN

EVENTS = "/channels/lark/events"
CARD = "/channels/lark/card"


def new_chat() -> str:
    return f"oc_{uuid.uuid4().hex[:16]}"


async def post(
    http: httpx.AsyncClient, path: str, lark: LarkEvents, payload: dict[str, Any]
) -> httpx.Response:
    body, headers = lark.request(payload)
    return await http.post(path, content=body, headers=headers)


async def say(
    http: httpx.AsyncClient, lark: LarkEvents, api: FakeLarkOpenApi, chat: str, text: str, **options: Any
) -> dict[str, Any]:
    """A person writes `text` in `chat` (known to the stand-in, so answers can reply to it)."""
    sender = options.pop("sender", ALICE)
    message_id = api.user_message(chat, text, open_id=sender)
    event = lark.text(chat, sender, text, message_id=message_id, **options)
    response = await post(http, EVENTS, lark, event)
    assert response.status_code == 200, response.text
    assert response.json() == {"msg": "success"}
    return event


async def user_messages(http: httpx.AsyncClient, key: str, count: int = 1) -> list[dict[str, Any]]:
    async def probe() -> list[dict[str, Any]]:
        session = await http.get(f"/sessions/{key}")
        return [m for m in session.json()["messages"] if m["role"] == "user"]

    return await assert_eventually(probe, lambda found: len(found) >= count, what=f"{count} user message(s)")


async def absent(http: httpx.AsyncClient, key: str) -> bool:
    return (await http.get(f"/sessions/{key}")).status_code == 404


# ------------------------------------------------------------------ events


async def test_url_verification_answers_the_challenge(http: httpx.AsyncClient, lark: LarkEvents) -> None:
    encrypted = await post(http, EVENTS, lark, lark.url_verification("ch-123"))
    assert encrypted.status_code == 200, encrypted.text
    assert encrypted.json() == {"challenge": "ch-123"}
    body, _ = lark.request(lark.url_verification("ch-456"), encrypted=False)
    plain = await http.post(EVENTS, content=body, headers={"Content-Type": "application/json"})
    assert plain.json() == {"challenge": "ch-456"}
    forged = LarkEvents(verification_token="someone-else", encrypt_key=None).url_verification("x")
    refused = await http.post(EVENTS, json=forged)
    assert refused.status_code == 401
    assert "verification token" in refused.json()["detail"]


async def test_a_p2p_text_starts_the_chat_session_as_its_sender(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    event = await say(http, lark, lark_api, chat, "hello synapse")
    key = f"lark:{chat}"
    [message] = await user_messages(http, key)
    assert (message["content"], message["name"]) == ("hello synapse", ALICE)
    assert message["metadata"]["channel"] == "lark" and message["metadata"]["message_id"], (
        "the conversation keeps the chat message's id"
    )
    session = (await http.get(f"/sessions/{key}")).json()
    assert session["task_id"] == session_workflow_id(key)
    assert session["channel"] == "lark"
    assert session["approvers"] == [ADMIN]
    assert event["event"]["message"]["chat_type"] == "p2p"


async def test_group_messages_count_only_when_they_mention_the_bot(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    await say(http, lark, lark_api, chat, "just chatting", chat_type="group")
    bot = [mention("@_user_1", "ou_bot", "Synapse")]
    await say(http, lark, lark_api, chat, "@_user_1 what is pending?", chat_type="group", mentions=bot)
    [message] = await user_messages(http, f"lark:{chat}")
    assert message["content"] == "what is pending?"


async def test_a_thread_is_its_own_session(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    bot = [mention("@_user_1", "ou_bot", "Synapse")]
    await say(
        http, lark, lark_api, chat, "@_user_1 in a topic", chat_type="group", mentions=bot, thread_id="omt_1"
    )
    [message] = await user_messages(http, f"lark:{chat}:omt_1")
    assert message["content"] == "in a topic"
    assert await absent(http, f"lark:{chat}")


async def test_a_redelivered_event_is_one_message(
    http: httpx.AsyncClient, client: Client, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    key = f"lark:{chat}"
    event = await say(http, lark, lark_api, chat, "only once")
    assert (await post(http, EVENTS, lark, event)).status_code == 200  # same event id: skipped by the API
    again = lark.text(chat, ALICE, "only once", message_id=event["event"]["message"]["message_id"])
    assert (await post(http, EVENTS, lark, again)).status_code == 200  # new event id: the session skips it
    await say(http, lark, lark_api, chat, "second")
    messages = await user_messages(http, key, count=2)
    assert [m["content"] for m in messages] == ["only once", "second"]
    history = await client.get_workflow_handle(session_workflow_id(key)).fetch_history()
    signals = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    assert len(signals) == 3, "the repeated event id must not even reach the workflow"


async def test_a_redelivery_to_another_api_process_is_skipped_too(
    http: httpx.AsyncClient, client: Client, settings: Settings, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    key = f"lark:{chat}"
    event = await say(http, lark, lark_api, chat, "only once")
    async with serve(create_app(settings, client=client)) as other:  # a second API on the same data dir
        assert (await post(other, EVENTS, lark, event)).status_code == 200
    await say(http, lark, lark_api, chat, "second")
    messages = await user_messages(http, key, count=2)
    assert [m["content"] for m in messages] == ["only once", "second"]
    history = await client.get_workflow_handle(session_workflow_id(key)).fetch_history()
    signals = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    assert len(signals) == 2, "the redelivered event did not reach the workflow"


async def test_a_signed_request_replayed_later_is_refused(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    body, _ = lark.request(lark.text(chat, ALICE, "DELETE FROM orders"))
    stale = signed_headers(body, ENCRYPT_KEY, at=time.time() - 6 * 60)

    answer = await http.post(EVENTS, content=body, headers=stale)

    assert answer.status_code == 401 and "at most 300 s" in answer.json()["detail"]
    assert await absent(http, f"lark:{chat}")


async def test_a_forged_request_is_refused_and_starts_nothing(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    body, headers = lark.request(lark.text(chat, ALICE, "DROP TABLE orders"))
    tampered = await http.post(EVENTS, content=body, headers={**headers, "X-Lark-Signature": "0" * 64})
    assert tampered.status_code == 401
    assert "X-Lark-Signature" in tampered.json()["detail"]
    unsigned = await http.post(EVENTS, content=body, headers={"Content-Type": "application/json"})
    assert unsigned.status_code == 401
    assert "missing" in unsigned.json()["detail"]
    other_key = LarkEvents(verification_token=TOKEN, encrypt_key="not-our-key")
    body, headers = other_key.request(other_key.text(chat, ALICE, "hi"))
    undecryptable = await http.post(EVENTS, content=body, headers=headers)
    assert undecryptable.status_code == 401
    wrong_token = LarkEvents(verification_token="not-our-token", encrypt_key=ENCRYPT_KEY)
    refused = await post(http, EVENTS, wrong_token, wrong_token.text(chat, ALICE, "hi"))
    assert refused.status_code == 401
    assert "verification token" in refused.json()["detail"]
    garbage = await http.post(EVENTS, content=b"not json", headers=headers)
    assert garbage.status_code == 400
    assert await absent(http, f"lark:{chat}")


async def test_an_image_gets_a_polite_reply_and_no_session(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    chat = new_chat()
    message_id = lark_api.user_message(chat, "(an image)", open_id=ALICE)
    image = lark.message(
        chat_id=chat,
        sender=ALICE,
        message_type="image",
        content='{"image_key":"img_v2_1"}',
        message_id=message_id,
    )
    response = await post(http, EVENTS, lark, image)
    assert response.status_code == 200, response.text

    async def sent() -> list[FakeMessage]:
        return lark_api.sent()

    replies = await assert_eventually(sent, lambda found: len(found) == 1, what="the reply")
    assert replies[0].content == {"text": "I can only read text messages for now."}
    assert replies[0].reply_to == message_id
    assert await absent(http, f"lark:{chat}")


async def test_an_event_type_synapse_does_not_handle_is_acknowledged(
    http: httpx.AsyncClient, lark: LarkEvents
) -> None:
    read = lark.envelope("im.message.message_read_v1", {"reader": {"reader_id": {"open_id": ALICE}}})
    response = await post(http, EVENTS, lark, read)
    assert response.status_code == 200, "a 500 would make Lark redeliver it for hours"
    assert "ignored" in response.json()["msg"]


# ------------------------------------------------------------------ card clicks


async def ask_for_delete_in_lark(
    http: httpx.AsyncClient, lark: LarkEvents, api: FakeLarkOpenApi, chat: str
) -> tuple[str, str]:
    """Alice asks for the destructive statement in `chat`; the session's key and interaction id."""
    key = f"lark:{chat}"
    await say(http, lark, api, chat, DELETE_CANCELLED)
    chunks = await collect_events(http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST))
    return key, asked(chunks[-1]).interaction_id


async def click(
    http: httpx.AsyncClient, lark: LarkEvents, operator: str, action: Action, key: str, interaction_id: str
) -> dict[str, Any]:
    """`operator` presses Approve or Deny on the card of `interaction_id`; Lark's answer."""
    chat = key.split(":")[1]
    payload = lark.card_action(
        operator=operator, value=button_value(action, key, interaction_id, f"session:{key}"), chat_id=chat
    )
    response = await post(http, CARD, lark, payload)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_approve_click_decides_as_the_clicker_and_runs_the_statement(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    assert count_orders("status = 'cancelled'") == 3
    answer = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert answer["toast"] == {"type": "success", "content": f"Approved by {ADMIN} (lark)."}, answer
    assert answer["card"]["type"] == "raw"
    assert answer["card"]["data"]["header"]["title"]["content"] == "Approved: sql"
    assert count_orders("status = 'cancelled'") == 0
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["kind"], audit[-1]["principal"], audit[-1]["channel"]) == ("approved", ADMIN, "lark")

    again = await click(http, lark, ADMIN, "deny", key, interaction_id)
    assert again["toast"]["type"] == "info"
    assert f"Already approved by {ADMIN} (lark)" in again["toast"]["content"]
    assert count_orders("status = 'cancelled'") == 0


async def test_deny_click_changes_nothing_and_the_requester_may_decide(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0]
    assert pending["requested_by"] == ALICE
    answer = await click(http, lark, ALICE, "deny", key, interaction_id)
    assert answer["toast"] == {"type": "success", "content": f"Denied by {ALICE} (lark)."}
    assert answer["card"]["data"]["header"]["title"]["content"] == "Denied: sql"
    assert count_orders("status = 'cancelled'") == 3


async def test_a_click_by_someone_not_allowed_is_refused_and_audited(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    answer = await click(http, lark, "ou_mallory", "approve", key, interaction_id)
    assert answer["toast"]["type"] == "error"
    assert "ou_mallory" in answer["toast"]["content"] and ADMIN in answer["toast"]["content"]
    assert "card" not in answer
    assert count_orders("status = 'cancelled'") == 3

    async def last_audit() -> dict[str, Any]:
        entries: list[dict[str, Any]] = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
        return entries[-1]

    rejected = await assert_eventually(last_audit, lambda e: e["kind"] == "rejected", what="a rejection")
    assert (rejected["principal"], rejected["channel"]) == ("ou_mallory", "lark")
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "waiting_approval"


async def test_a_click_after_the_deadline_says_the_request_expired(
    client: Client, settings: Settings, worker: None, lark: LarkEvents, lark_api: FakeLarkOpenApi
) -> None:
    """A chat's session takes the deployment's approval timeout (here 1 s)."""
    brief = settings.model_copy(
        update={"api": settings.api.model_copy(update={"approval_timeout_seconds": 1})}
    )
    async with serve(create_app(brief, client=client)) as http:
        key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
        await collect_events(http, key, is_type(TaskChunkType.COMPLETE))  # denied by system:timeout
        answer = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert answer["toast"]["type"] == "info"
    assert "expired" in answer["toast"]["content"]


async def test_a_click_while_the_session_has_no_update_slot_waits_for_one(
    http: httpx.AsyncClient,
    client: Client,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    count_orders: Callable[[str], int],
) -> None:
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    handle = client.get_workflow_handle(session_workflow_id(key))
    await occupy_update_slots(handle)

    answer = await click(http, lark, ADMIN, "approve", key, interaction_id)

    assert answer["toast"]["type"] == "info", answer
    assert "still applying" in answer["toast"]["content"]
    assert count_orders("status = 'cancelled'") == 3
    await release_update_slots(handle)
    await assert_eventually(
        lambda: http.get(f"/sessions/{key}/audit"),
        lambda r: r.json()["entries"][-1]["kind"] == "approved",
        what="the click's decision, once a slot was free",
    )
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["principal"], audit[-1]["channel"]) == (ADMIN, "lark")
    await assert_eventually(
        lambda: asyncio.to_thread(count_orders, "status = 'cancelled'"), lambda n: n == 0, what="applied"
    )


async def test_a_foreign_button_or_a_closed_session_decides_nothing(
    http: httpx.AsyncClient, lark: LarkEvents
) -> None:
    foreign = lark.card_action(operator=ADMIN, value={"vote": "yes"}, chat_id=new_chat())
    answer = (await post(http, CARD, lark, foreign)).json()
    assert answer["toast"]["type"] == "error"
    unknown = await click(http, lark, ADMIN, "approve", f"lark:{new_chat()}", "tool_1")
    assert unknown["toast"]["type"] == "info"
    assert "no session" in unknown["toast"]["content"]


@asynccontextmanager
async def slow_sql(client: Client, settings: Settings, *, quick: bool) -> AsyncIterator[httpx.AsyncClient]:
    """The app and a worker whose SQL tool takes 3 s; `quick=False` runs it as a regular activity."""
    tools = ToolActivities(settings)
    sql = tools.tools["sql"]
    run_sql = sql.run

    async def slow(run: ToolRun) -> ToolResult:
        await asyncio.sleep(3)
        return await run_sql(run)

    sql.run = slow  # type: ignore[method-assign]
    if not quick:
        sql.descriptor = sql.descriptor.model_copy(update={"capabilities": []})
    async with (
        build_worker(client, settings, tools=tools),
        serve(create_app(settings, client=client)) as http,
    ):
        yield http


async def timed_click(
    http: httpx.AsyncClient, lark: LarkEvents, key: str, interaction_id: str
) -> dict[str, Any]:
    started = time.monotonic()
    answer = await click(http, lark, ADMIN, "approve", key, interaction_id)
    assert time.monotonic() - started < 2.9, "Lark drops callback answers after 3 s"
    return answer


async def test_a_click_on_a_long_running_tool_is_answered_within_three_seconds(
    client: Client,
    settings: Settings,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    count_orders: Callable[[str], int],
) -> None:
    async with slow_sql(client, settings, quick=False) as http:
        key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
        answer = await timed_click(http, lark, key, interaction_id)
        assert answer["toast"] == {
            "type": "success",
            "content": "Approved. The tool is running; the card shows its result when done.",
        }
        assert "Approved" in answer["card"]["data"]["header"]["title"]["content"]
        await assert_eventually(lambda: _orders_left(count_orders), lambda left: left == 0, what="the DELETE")


async def test_a_click_the_api_cannot_answer_within_lark_s_window_is_still_applied(
    http: httpx.AsyncClient,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    count_orders: Callable[[str], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A starved API (here: the click's handling held up past the callback's window) answers in
    time that the decision is on its way, not a 500 Lark would redeliver; the decision applies."""
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
    decide = chat_clicks.decide

    async def starved(*args: Any) -> chat_clicks.ClickAnswer:
        await asyncio.sleep(CLICK_WAIT_SECONDS + 0.5)
        return await decide(*args)

    monkeypatch.setattr(chat_clicks, "decide", starved)

    answer = await click(http, lark, ADMIN, "approve", key, interaction_id)

    assert answer == lark_clicks.still_applying()
    await assert_eventually(lambda: _orders_left(count_orders), lambda left: left == 0, what="the DELETE")
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit if e["kind"] == "approved"] == [("approved", ADMIN)]


async def test_a_click_while_a_quick_tool_blocks_the_workflow_task_is_answered_in_time(
    client: Client,
    settings: Settings,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    count_orders: Callable[[str], int],
) -> None:
    """A quick tool runs inside the workflow task that accepts the decision: acceptance comes late."""
    async with slow_sql(client, settings, quick=True) as http:
        key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, new_chat())
        answer = await timed_click(http, lark, key, interaction_id)
        assert answer == {
            "toast": {
                "type": "info",
                "content": "Decision received; Synapse is still applying it. The card updates when done.",
            }
        }
        await assert_eventually(lambda: _orders_left(count_orders), lambda left: left == 0, what="the DELETE")
        audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
        assert (audit[-1]["kind"], audit[-1]["principal"]) == ("approved", ADMIN)


async def _orders_left(count_orders: Callable[[str], int]) -> int:
    return count_orders("status = 'cancelled'")


# ------------------------------------------------------------------ replies in the chat


async def chat_texts(api: FakeLarkOpenApi, chat: str) -> list[str]:
    return [str(m.content.get("text", "")) for m in api.sent() if m.chat_id == chat and m.msg_type == "text"]


async def test_the_button_approval_applies_and_the_chat_gets_the_result(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    card = await assert_eventually(lambda: _cards(lark_api, chat), bool, what="the approval card in the chat")
    assert DELETE_CANCELLED in str(card[0].content)
    await click(http, lark, ALICE, "approve", key, interaction_id)
    texts = await assert_eventually(lambda: chat_texts(lark_api, chat), bool, what="the result")
    assert texts == ["DELETE done: 3 rows affected."], "the chat gets the agent's answer, once"
    assert len(await _cards(lark_api, chat)) == 1, "one card, updated in place"
    assert [u.content["header"]["title"]["content"] for u in await _updates(lark_api)] == ["Approved: sql"]
    assert count_orders("status = 'cancelled'") == 0


@pytest.mark.parametrize(
    ("reply", "approved"),
    [("确认", True), ("取消", False), ("等一下再说", False)],
    ids=["confirm", "cancel", "ambiguous"],
)
async def test_a_reply_in_the_chat_answers_the_pending_request(
    http: httpx.AsyncClient,
    lark: LarkEvents,
    lark_api: FakeLarkOpenApi,
    count_orders: Callable[[str], int],
    reply: str,
    approved: bool,
) -> None:
    chat = new_chat()
    key, _ = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    await say(http, lark, lark_api, chat, reply)
    audit = await assert_eventually(
        lambda: _audit(http, key),
        lambda entries: entries[-1]["kind"] in ("approved", "denied"),
        what="the decision",
    )
    assert (audit[-1]["kind"], audit[-1]["principal"], audit[-1]["channel"]) == (
        "approved" if approved else "denied",
        ALICE,
        "lark",
    )
    updates = await assert_eventually(lambda: _updates(lark_api), bool, what="the card updated")
    assert [u.content["header"]["title"]["content"] for u in updates] == [
        "Approved: sql" if approved else "Denied: sql"
    ], "the one card, updated once"
    assert count_orders("status = 'cancelled'") == (0 if approved else 3)
    assert [m["content"] for m in await user_messages(http, key)] == [DELETE_CANCELLED], (
        "the reply is not for the agent"
    )


async def test_a_confirmation_from_someone_else_in_the_group_decides_nothing(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    chat = new_chat()
    key, interaction_id = await ask_for_delete_in_lark(http, lark, lark_api, chat)
    await say(http, lark, lark_api, chat, "确认", sender="ou_mallory")
    texts = await assert_eventually(lambda: chat_texts(lark_api, chat), bool, what="who may")
    assert texts == [
        f"'ou_mallory' may not decide interaction '{interaction_id}'; allowed approvers: {ALICE}, {ADMIN}"
    ]
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "waiting_approval"
    assert count_orders("status = 'cancelled'") == 3


async def test_two_chats_confirm_independently(
    http: httpx.AsyncClient, lark: LarkEvents, lark_api: FakeLarkOpenApi, count_orders: Callable[[str], int]
) -> None:
    first, second = new_chat(), new_chat()
    first_key, _ = await ask_for_delete_in_lark(http, lark, lark_api, first)
    second_key, _ = await ask_for_delete_in_lark(http, lark, lark_api, second)
    await say(http, lark, lark_api, second, "取消")
    await assert_eventually(lambda: _audit(http, second_key), lambda e: e[-1]["kind"] == "denied")
    assert (await http.get(f"/sessions/{first_key}")).json()["status"] == "waiting_approval", (
        "chats never cross"
    )
    await say(http, lark, lark_api, first, "确认")
    await assert_eventually(lambda: _audit(http, first_key), lambda e: e[-1]["kind"] == "approved")
    assert count_orders("status = 'cancelled'") == 0


async def _audit(http: httpx.AsyncClient, key: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    return entries


async def _cards(api: FakeLarkOpenApi, chat: str) -> list[FakeMessage]:
    return [m for m in api.sent() if m.chat_id == chat and m.msg_type == "interactive"]


async def _updates(api: FakeLarkOpenApi) -> list[Any]:
    return api.card_updates()
