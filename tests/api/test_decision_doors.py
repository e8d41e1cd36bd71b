"""Issue 45: every door a decision comes through, for every role (README "One door for every decision").

`MATRIX` is the table as asserted, one row per door. Each door's test walks its row (`walk`) on real
requests: the refused roles first, on one pending request (it stays pending, nothing runs, and the
audit trail of the workflow that checked the decision has a `rejected` entry naming who and through
which channel; the refusal is recorded by a signal, so the audit is polled), then each deciding role on
a request of its own (the SQL ran or the gate opened; the `approved` entry and the outcome name that
principal and channel). Roles come from API keys on the HTTP doors (`KEYS`; a body naming someone else
is ignored) and from the channel's settings in chats: `LARK_ADMINS` / `DINGTALK_ADMINS` members are
approvers, every other member an operator (`requesters_decide` off).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from contracts import ReplyRefused, Role
from core.settings import ApiSettings, Settings, TemporalSettings
from tests.fakes.dingtalk_open_api import dingtalk_open_api
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, lark_open_api
from worker import build_worker

from ..conftest import assert_eventually
from ..support import collect_events, event_of, serve
from ..workflows.graph.flows import gated
from .dingtalk import chat as dingtalk
from .dingtalk.conftest import dingtalk_settings
from .lark.conftest import ENCRYPT_KEY, TOKEN, lark_settings
from .lark.test_inbound import click, new_chat, say
from .test_session_graphs import BLUEPRINT, plan_message
from .test_sessions import DELETE_CANCELLED


class Cell(StrEnum):
    """What a role gets at a door."""

    DECIDES = "decides"
    FORBIDDEN = "403, recorded"
    """The API refuses the role before any workflow is asked, and records the attempt there."""
    NO_MESSAGES = "403 (sends no messages)"
    """A viewer may send no message, so no reply reaches a session and none is recorded (README)."""
    REFUSED = "refused, recorded, told"
    """The door takes it; the workflow's one check refuses it, audits it, tells the sender."""
    NO_CHAT_VIEWER = "n/a: a chat member is an operator or an approver by the channel's settings"
    NO_CHAT_ADMIN = "n/a: the channel's admins are approvers; no chat user has the admin role"


HTTP_DECIDE = "POST /sessions/{key}/interactions/{id}"
HTTP_CHAT = "确认 by POST /sessions/{key}/messages"
LARK_REPLY = "确认 in a Lark chat"
DINGTALK_REPLY = "确认 in a DingTalk chat"
LARK_CLICK = "Approve on a Lark card"
GRAPH_DECIDE = "POST /graphs/{id}/interactions/{id}"
RELAYED_CHAT = "确认 into the session, for its graph's gate"
RELAYED_HTTP = "POST /sessions/{key}/interactions/gate_N, for its graph's gate"
AGUI_RESUME = "a resume entry of POST /ag-ui"

FORBIDDEN, NO_MESSAGES, REFUSED, DECIDES = Cell.FORBIDDEN, Cell.NO_MESSAGES, Cell.REFUSED, Cell.DECIDES
NO_VIEWER, NO_ADMIN = Cell.NO_CHAT_VIEWER, Cell.NO_CHAT_ADMIN


def row(*cells: Cell) -> dict[Role, Cell]:
    return dict(zip(Role, cells, strict=True))


MATRIX: dict[str, dict[Role, Cell]] = {
    # door: row(viewer, operator, approver, admin)
    HTTP_DECIDE: row(FORBIDDEN, FORBIDDEN, DECIDES, DECIDES),
    HTTP_CHAT: row(NO_MESSAGES, REFUSED, DECIDES, DECIDES),
    LARK_REPLY: row(NO_VIEWER, REFUSED, DECIDES, NO_ADMIN),
    DINGTALK_REPLY: row(NO_VIEWER, REFUSED, DECIDES, NO_ADMIN),
    LARK_CLICK: row(NO_VIEWER, REFUSED, DECIDES, NO_ADMIN),
    GRAPH_DECIDE: row(FORBIDDEN, FORBIDDEN, DECIDES, DECIDES),
    RELAYED_CHAT: row(NO_MESSAGES, REFUSED, DECIDES, DECIDES),
    RELAYED_HTTP: row(FORBIDDEN, FORBIDDEN, DECIDES, DECIDES),
    AGUI_RESUME: row(FORBIDDEN, FORBIDDEN, DECIDES, DECIDES),
}
"""Door × role (viewer, operator, approver, admin), as asserted."""

KEYS = "k-view:vera:viewer,k-op:otto:operator,k-ok:ann:approver,k-adm:adam:admin"
KEY_OF = {Role.viewer: "k-view", Role.operator: "k-op", Role.approver: "k-ok", Role.admin: "k-adm"}
NAME_OF = {Role.viewer: "vera", Role.operator: "otto", Role.approver: "ann", Role.admin: "adam"}
REQUESTER = Role.operator
"""Who asks on the HTTP doors (sends the statement, posts the graph or the plan)."""
LARK_USER = {Role.operator: "ou_alice", Role.approver: "ou_admin"}
DINGTALK_USER = {Role.operator: "alice", Role.approver: "boss"}
"""Who stands for a role in a chat: a member (also the requester), and the channel's admin."""

STATEMENTS = [
    (DELETE_CANCELLED, "status = 'cancelled'", 3),
    ("DELETE FROM orders WHERE status = 'shipped'", "status = 'shipped'", 2),
]
"""One destructive statement per deciding role: (SQL, the rows it deletes, how many)."""
GATES = ["first", "second"]
"""A graph's gated tasks, one per deciding role, waiting at once."""


def bearer(role: Role) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY_OF[role]}"}


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """API keys on (the `http` fixture's app; the chat doors run their own on the same data dir)."""
    return Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue),
        api=ApiSettings(keys=KEYS),
        _env_file=None,
    )


# ------------------------------------------------------------------ the walk


@dataclass
class Asked:
    """A pending request, and the audit trails that record what becomes of it."""

    interaction_id: str
    n: int
    """Which of `STATEMENTS` or `GATES` it asks about."""
    audit: str
    """The audit trail of the workflow that asked: its decision is recorded there."""
    refusals: str
    """The audit trail of the workflow that checks (and records) a refused decision."""
    graph: str = ""
    """The graph's path, for a gate."""


async def _nothing(*_: Any) -> None:
    return None


@dataclass
class Door:
    """How a door asks, decides and shows what came of it."""

    name: str
    ask: Callable[[int], Awaitable[Asked]]
    act: Callable[[Role, Asked], Awaitable[Any]]
    """Decide as the role (approve); the door's answer."""
    who: Mapping[Role, str]
    channel: str
    untouched: Callable[[Asked], Awaitable[None]]
    """Nothing ran and the request still waits."""
    done: Callable[[Asked], Awaitable[None]]
    """The decision's consequence is in place: the statement ran, the gate opened."""
    told: Callable[[Role, Asked, Any], Awaitable[None]] = _nothing
    """A `REFUSED` cell: the sender was told why."""
    answered: Callable[[Role, Asked, Any], Awaitable[None]] = _nothing
    """A deciding cell: the door's own answer says so."""


async def walk(http: httpx.AsyncClient, door: Door) -> None:
    """Walk the door's row of `MATRIX`: the refused roles on one request, then each deciding role on
    a request of its own."""
    cells = MATRIX[door.name]
    asked = await door.ask(0)
    for role, cell in cells.items():
        if cell not in (Cell.FORBIDDEN, Cell.NO_MESSAGES, Cell.REFUSED):
            continue
        answer = await door.act(role, asked)
        if cell != Cell.REFUSED:
            assert answer.status_code == 403, (door.name, role, answer.text)
            assert f"has role {role.name}" in answer.json()["detail"]
        elif isinstance(answer, httpx.Response):
            assert answer.status_code == 202, ("the door takes it", door.name, role, answer.text)
        if cell != Cell.NO_MESSAGES:
            entry = await audited(http, asked.refusals, "rejected", asked.interaction_id, door.who[role])
            assert entry["channel"] == door.channel and "needs approver" in entry["comment"], entry
        if cell == Cell.REFUSED:
            await door.told(role, asked, answer)
        await door.untouched(asked)
    for n, role in enumerate(role for role, cell in cells.items() if cell == Cell.DECIDES):
        asked = asked if n == 0 else await door.ask(n)
        await door.answered(role, asked, await door.act(role, asked))
        entry = await audited(http, asked.audit, "approved", asked.interaction_id, door.who[role])
        assert entry["channel"] == door.channel, entry
        await door.done(asked)


async def audited(
    http: httpx.AsyncClient, path: str, kind: str, interaction_id: str, principal: str
) -> dict[str, Any]:
    """The `kind` entry of the audit trail at `path` naming `principal` on `interaction_id` (polled)."""

    async def probe() -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = (await http.get(path)).json()["entries"]
        wanted = (kind, interaction_id, principal)
        return [e for e in entries if (e["kind"], e["interaction_id"], e["principal"]) == wanted]

    found = await assert_eventually(probe, bool, what=f"{kind} {interaction_id} by {principal} in {path}")
    return found[0]


async def pending_in(
    http: httpx.AsyncClient, path: str, pick: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The request waiting at `path` (a session or a graph) that `pick` picks (waits for it)."""

    async def probe() -> list[dict[str, Any]]:
        found = await http.get(path)
        return (
            [p for p in found.json()["pending_interactions"] if pick(p)] if found.status_code == 200 else []
        )

    return (await assert_eventually(probe, bool, what=f"a pending request at {path}"))[0]


async def still_pending(http: httpx.AsyncClient, path: str, interaction_id: str) -> None:
    waiting = [p["interaction_id"] for p in (await http.get(path)).json()["pending_interactions"]]
    assert interaction_id in waiting, waiting


# ------------------------------------------------------------------ a session's SQL request


def sql_door(
    http: httpx.AsyncClient,
    key: str,
    count_orders: Callable[[str], int],
    send: Callable[[str], Awaitable[None]],
    **door: Any,
) -> Door:
    """A door to a session whose requester `send`s each statement of `STATEMENTS`."""
    session = f"/sessions/{key}"

    async def ask(n: int) -> Asked:
        sql = STATEMENTS[n][0]
        await send(sql)
        asked = await pending_in(http, session, lambda p: p["ask"].get("arguments") == {"sql": sql})
        return Asked(asked["interaction_id"], n, f"{session}/audit", f"{session}/audit")

    async def rows(asked: Asked) -> int:
        return count_orders(STATEMENTS[asked.n][1])

    async def untouched(asked: Asked) -> None:
        assert await rows(asked) == STATEMENTS[asked.n][2], "nothing ran"
        await still_pending(http, session, asked.interaction_id)

    async def done(asked: Asked) -> None:
        await assert_eventually(lambda: rows(asked), lambda left: left == 0, what="the statement ran")

    return Door(ask=ask, untouched=untouched, done=done, **door)


async def send_as_requester(http: httpx.AsyncClient, key: str, content: str) -> None:
    sent = await http.post(f"/sessions/{key}/messages", json={"content": content}, headers=bearer(REQUESTER))
    assert sent.status_code == 202, sent.text


async def decide_over_http(http: httpx.AsyncClient, path: str, role: Role) -> httpx.Response:
    """Approve at `path` with the role's key, the body naming someone else (ignored)."""
    return await http.post(path, json={"approved": True, "principal": "mallory"}, headers=bearer(role))


async def reply_over_http(http: httpx.AsyncClient, key: str, role: Role) -> httpx.Response:
    """`确认` into the session with the role's key."""
    return await http.post(
        f"/sessions/{key}/messages", json={"content": "确认", "principal": "mallory"}, headers=bearer(role)
    )


async def told_on_the_stream(http: httpx.AsyncClient, key: str, asked: Asked) -> None:
    """The session's stream says why the reply did not decide."""
    chunks = await collect_events(http, key, lambda c: isinstance(c.content, ReplyRefused))
    refused = event_of(chunks[-1], ReplyRefused)
    assert refused.interaction_id == asked.interaction_id
    assert "needs approver" in refused.reason


async def accepted(role: Role, asked: Asked, answer: httpx.Response) -> None:
    assert answer.status_code == 202, answer.text


async def outcome_names_them(role: Role, asked: Asked, answer: httpx.Response) -> None:
    """An HTTP decision's answer: the outcome, decided by the key's principal through `http`."""
    assert answer.status_code == 200, (role, answer.text)
    outcome = answer.json()
    assert (outcome["approved"], outcome["decided_by"], outcome["channel"]) == (True, NAME_OF[role], "http")


async def test_http_decide(http: httpx.AsyncClient, count_orders: Callable[[str], int]) -> None:
    http.headers.update(bearer(Role.viewer))  # reads; each decision names its own key
    key = f"doors-{uuid.uuid4().hex[:8]}"

    async def act(role: Role, asked: Asked) -> httpx.Response:
        return await decide_over_http(http, f"/sessions/{key}/interactions/{asked.interaction_id}", role)

    door = sql_door(
        http,
        key,
        count_orders,
        lambda sql: send_as_requester(http, key, sql),
        name=HTTP_DECIDE,
        act=act,
        who=NAME_OF,
        channel="http",
        answered=outcome_names_them,
    )
    await walk(http, door)


async def test_http_chat_reply(http: httpx.AsyncClient, count_orders: Callable[[str], int]) -> None:
    http.headers.update(bearer(Role.viewer))
    key = f"doors-{uuid.uuid4().hex[:8]}"

    async def told(role: Role, asked: Asked, answer: httpx.Response) -> None:
        await told_on_the_stream(http, key, asked)

    door = sql_door(
        http,
        key,
        count_orders,
        lambda sql: send_as_requester(http, key, sql),
        name=HTTP_CHAT,
        act=lambda role, _asked: reply_over_http(http, key, role),
        who=NAME_OF,
        channel="http",
        told=told,
        answered=accepted,
    )
    await walk(http, door)
    said = [m["content"] for m in (await http.get(f"/sessions/{key}/messages")).json()["messages"]]
    assert "确认" not in said, "the replies were decisions, not messages for the agent"


async def test_agui_resume(http: httpx.AsyncClient, count_orders: Callable[[str], int]) -> None:
    http.headers.update(bearer(Role.viewer))
    thread = f"doors-{uuid.uuid4().hex[:8]}"

    def run(n: int, **more: Any) -> dict[str, Any]:
        """An AG-UI run's body: statement `n` as the last message, a fresh run id."""
        said = [
            {"id": f"u{i}", "role": "user", "content": sql}
            for i, (sql, _, _) in enumerate(STATEMENTS[: n + 1])
        ]
        return {"threadId": thread, "runId": uuid.uuid4().hex, "messages": said, **more}

    async def send(sql: str) -> None:
        n = [s for s, _, _ in STATEMENTS].index(sql)
        sent = await http.post("/ag-ui", json=run(n), headers=bearer(REQUESTER))
        assert sent.status_code == 200 and '"type":"interrupt"' in sent.text, sent.text

    async def act(role: Role, asked: Asked) -> httpx.Response:
        entry = {"interruptId": asked.interaction_id, "status": "resolved", "payload": {"approved": True}}
        entry["metadata"] = {"principal": "mallory"}  # a body naming someone else: ignored
        body = run(asked.n, resume=[entry], forwardedProps={"principal": "mallory"})
        return await http.post("/ag-ui", json=body, headers=bearer(role))

    async def answered(role: Role, asked: Asked, answer: httpx.Response) -> None:
        """The run's `decision_taken` names the key's principal, through `ag-ui`."""
        assert answer.status_code == 200, (role, answer.text)
        assert f'"decided_by":"{NAME_OF[role]}"' in answer.text and '"channel":"ag-ui"' in answer.text

    door = sql_door(
        http,
        f"agui:{thread}",
        count_orders,
        send,
        name=AGUI_RESUME,
        act=act,
        who=NAME_OF,
        channel="ag-ui",
        answered=answered,
    )
    await walk(http, door)


# ------------------------------------------------------------------ chats


@asynccontextmanager
async def running(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A worker and the app with `settings` (a chat channel on)."""
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
        yield http


@dataclass
class LarkChat:
    """A Lark chat whose members are operators (`requesters_decide` off), on a running app."""

    http: httpx.AsyncClient
    api: FakeLarkOpenApi
    chat: str
    lark: LarkEvents

    @property
    def key(self) -> str:
        return f"lark:{self.chat}"

    async def say(self, text: str, role: Role) -> None:
        await say(self.http, self.lark, self.api, self.chat, text, sender=LARK_USER[role])

    async def texts(self) -> list[str]:
        sent = self.api.sent()
        return [
            str(m.content.get("text", "")) for m in sent if m.chat_id == self.chat and m.msg_type == "text"
        ]

    def door(self, count_orders: Callable[[str], int], **door: Any) -> Door:
        """A member asks for each statement."""
        return sql_door(
            self.http,
            self.key,
            count_orders,
            lambda sql: self.say(sql, Role.operator),
            who=LARK_USER,
            channel="lark",
            **door,
        )


@asynccontextmanager
async def lark_chat(client: Client, tmp_path: Path, task_queue: str) -> AsyncIterator[LarkChat]:
    async with lark_open_api() as api:
        on = lark_settings(tmp_path, task_queue, api)
        members_operate = on.model_copy(
            update={"lark": on.lark.model_copy(update={"requesters_decide": False})}
        )
        async with running(client, members_operate) as http:
            yield LarkChat(
                http, api, new_chat(), LarkEvents(verification_token=TOKEN, encrypt_key=ENCRYPT_KEY)
            )


async def test_lark_reply(
    client: Client, tmp_path: Path, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    async with lark_chat(client, tmp_path, task_queue) as chat:

        async def act(role: Role, asked: Asked) -> None:
            await chat.say("确认", role)

        async def told(role: Role, asked: Asked, _answer: None) -> None:
            texts = await assert_eventually(
                chat.texts, lambda t: any("needs approver" in x for x in t), what="the member told"
            )
            assert any(LARK_USER[role] in text for text in texts), texts

        await walk(chat.http, chat.door(count_orders, name=LARK_REPLY, act=act, told=told))


async def test_lark_card_click(
    client: Client, tmp_path: Path, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    async with lark_chat(client, tmp_path, task_queue) as chat:

        async def act(role: Role, asked: Asked) -> dict[str, Any]:
            return await click(
                chat.http, chat.lark, LARK_USER[role], "approve", chat.key, asked.interaction_id
            )

        async def told(role: Role, asked: Asked, answer: dict[str, Any]) -> None:
            assert answer["toast"]["type"] == "error" and "needs approver" in answer["toast"]["content"], (
                answer
            )
            assert "card" not in answer, "the card stays as it was"

        async def answered(role: Role, asked: Asked, answer: dict[str, Any]) -> None:
            assert answer["toast"]["type"] in ("success", "info"), answer  # info: still applying

        await walk(chat.http, chat.door(count_orders, name=LARK_CLICK, act=act, told=told, answered=answered))


async def test_dingtalk_reply(
    client: Client, tmp_path: Path, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    async with dingtalk_open_api() as fake:
        members_operate = dingtalk_settings(tmp_path, task_queue, fake, requesters_decide="false")
        async with running(client, members_operate) as http:
            group, key = dingtalk.new_group()

            async def send(sql: str) -> None:
                await dingtalk.say(fake, group, sql, sender=DINGTALK_USER[Role.operator])

            async def act(role: Role, asked: Asked) -> None:
                await dingtalk.say(fake, group, "确认", sender=DINGTALK_USER[role])

            async def told(role: Role, asked: Asked, _answer: None) -> None:
                texts = await dingtalk.texts(
                    fake, lambda t: any("needs approver" in x for x in t), conversation=group
                )
                assert any(DINGTALK_USER[role] in text for text in texts), texts
                card = await dingtalk.card_for(fake, asked.n + 1)
                assert fake.cards[card.out_track_id].params["status"] == "pending"

            async def answered(role: Role, asked: Asked, _answer: None) -> None:
                await dingtalk.status_of(fake, await dingtalk.card_for(fake, asked.n + 1), "approved")

            door = sql_door(
                http,
                key,
                count_orders,
                send,
                name=DINGTALK_REPLY,
                act=act,
                who=DINGTALK_USER,
                channel="dingtalk",
                told=told,
                answered=answered,
            )
            await walk(http, door)


# ------------------------------------------------------------------ graphs


async def test_graph_decide(http: httpx.AsyncClient) -> None:
    http.headers.update(bearer(Role.viewer))
    created = await http.post(
        "/graphs",
        json={"blueprint": {"new_tasks": [gated(task_id) for task_id in GATES]}, "principal": "mallory"},
        headers=bearer(REQUESTER),
    )
    assert created.status_code == 201, created.text
    graph = f"/graphs/{created.json()['graph_id']}"

    async def ask(n: int) -> Asked:
        gate = await pending_in(http, graph, lambda p: p["ask"]["task_id"] == GATES[n])
        return Asked(gate["interaction_id"], n, f"{graph}/audit", f"{graph}/audit")

    async def status(asked: Asked) -> str:
        tasks = (await http.get(graph)).json()["tasks"]
        return str(next(t["status"] for t in tasks if t["task_id"] == GATES[asked.n]))

    async def untouched(asked: Asked) -> None:
        assert await status(asked) != "completed", "the gate held"
        await still_pending(http, graph, asked.interaction_id)

    async def done(asked: Asked) -> None:
        await assert_eventually(lambda: status(asked), lambda s: s == "completed", what="the gate opened")

    async def act(role: Role, asked: Asked) -> httpx.Response:
        return await decide_over_http(http, f"{graph}/interactions/{asked.interaction_id}", role)

    door = Door(GRAPH_DECIDE, ask, act, NAME_OF, "http", untouched, done, answered=outcome_names_them)
    await walk(http, door)
    requested = [
        e["principal"]
        for e in (await http.get(f"{graph}/audit")).json()["entries"]
        if e["kind"] == "requested"
    ]
    assert requested == [NAME_OF[REQUESTER]] * len(GATES), "the gates name who posted the graph"


def relayed_door(http: httpx.AsyncClient, key: str, *, refused_at_session: bool, **door: Any) -> Door:
    """A gate of the graph the session's agent proposed, relayed to the session; a refusal is
    recorded where it was checked: the session (a chat reply, checked there) or the graph."""
    session = f"/sessions/{key}"
    seen: set[str] = set()

    async def ask(n: int) -> Asked:
        await send_as_requester(http, key, plan_message(BLUEPRINT))
        gate = await pending_in(
            http, session, lambda p: p["ask"]["kind"] == "gate" and p["task_id"] not in seen
        )
        seen.add(gate["task_id"])
        assert gate["requested_by"] == NAME_OF[REQUESTER]
        graph = f"/graphs/{gate['task_id'].removeprefix('graph:')}"
        refusals = f"{session}/audit" if refused_at_session else f"{graph}/audit"
        return Asked(gate["interaction_id"], n, f"{graph}/audit", refusals, graph=graph)

    async def publish(asked: Asked) -> str:
        tasks = (await http.get(asked.graph)).json()["tasks"]
        return str(next(t["status"] for t in tasks if t["task_id"] == "publish"))

    async def untouched(asked: Asked) -> None:
        assert await publish(asked) != "completed", "the gate held"
        await still_pending(http, session, asked.interaction_id)

    async def done(asked: Asked) -> None:
        await assert_eventually(lambda: publish(asked), lambda s: s == "completed", what="the gate opened")

    return Door(ask=ask, untouched=untouched, done=done, who=NAME_OF, channel="http", **door)


async def test_relayed_gate_chat_reply(http: httpx.AsyncClient) -> None:
    http.headers.update(bearer(Role.viewer))
    key = f"doors-{uuid.uuid4().hex[:8]}"

    async def told(role: Role, asked: Asked, answer: httpx.Response) -> None:
        await told_on_the_stream(http, key, asked)

    door = relayed_door(
        http,
        key,
        refused_at_session=True,
        name=RELAYED_CHAT,
        act=lambda role, _asked: reply_over_http(http, key, role),
        told=told,
        answered=accepted,
    )
    await walk(http, door)


async def test_relayed_gate_http_decide(http: httpx.AsyncClient) -> None:
    http.headers.update(bearer(Role.viewer))
    key = f"doors-{uuid.uuid4().hex[:8]}"

    async def act(role: Role, asked: Asked) -> httpx.Response:
        return await decide_over_http(http, f"/sessions/{key}/interactions/{asked.interaction_id}", role)

    door = relayed_door(
        http, key, refused_at_session=False, name=RELAYED_HTTP, act=act, answered=outcome_names_them
    )
    await walk(http, door)
