"""Issue 49: one person under two spellings (`lark:ou_ann` and `ou_ann`) is one person at every door.

An attacker who may approve a two-person request must not count twice by approving once as
`lark:ou_ann` and once as `ou_ann` (or through another door, which spells them the other way), and
someone named `lark:…` in one place must be the approver named bare in another. Every contract field
that names a person is a `PersonId` (`contracts/principals.py`), so this holds whichever door builds
the model; these tests walk the doors on real requests (a real worker and dev server, the Lark SDK
against the loopback stand-in, DingTalk over the stand-in's Stream connection).

`TWO_PEOPLE` is the table as asserted: each row is a two-person SQL request in a session of some
kind, whose declared approvers spell ann with the prefix and bob without; ann approves through one
door, ann approves again through another door in the other spelling (refused: the request stays
pending, nothing runs, the refusal is audited under ann's one spelling), then bob approves (the
statement runs; the approvals are ann's and bob's, once each).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings
from tests.fakes.dingtalk_open_api import FakeDingTalk, dingtalk_open_api
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, lark_open_api
from worker import build_worker

from ..conftest import assert_eventually
from ..support import declaring, serve
from ..workflows.graph.flows import gated
from .dingtalk import chat as dingtalk
from .dingtalk.conftest import dingtalk_settings
from .lark.conftest import ENCRYPT_KEY, TOKEN, lark_settings
from .lark.test_inbound import click, new_chat, say
from .test_session_graphs import BLUEPRINT, plan_message
from .test_sessions import DELETE_CANCELLED

ANN, BOB, CAROL = "ou_ann", "ou_bob", "ou_carol"
"""Ann and Bob approve; Carol asks (the requester)."""
LARK = "lark:"

AGENTS = f"""
[agents.demo]
framework = "demo"
model = "demo"

[agents.demo.policies.sql]
approvals_required = 2
approvers = ["{LARK}{ANN}", "{BOB}"]
escalate_to = ["{LARK}ou_dee"]
"""
"""`Agent:demo`'s declared policy: SQL writes need two of ann and bob (ann spelled with the prefix)."""

SESSION_POLICIES = {
    "sql": {"approvals_required": 2, "approvers": [ANN, f"{LARK}{BOB}"], "escalate_to": [f"{LARK}ou_dee"]}
}
"""An HTTP session's own policy (bob spelled with the prefix this time), over approvers spelled
the other way round."""
SESSION_APPROVERS = [f"{LARK}{ANN}", BOB]

HTTP, CHAT, CLICK, DINGTALK = "HTTP decide", "确认 in the chat", "Approve on the card", "确认 in DingTalk"

TWO_PEOPLE: dict[str, tuple[str, tuple[str, str], tuple[str, str], tuple[str, str]]] = {
    # row: (session, ann's approval, ann's again (refused), bob's approval), each (door, spelling)
    "lark: click, then HTTP as lark:, then chat": ("lark", (CLICK, ANN), (HTTP, LARK + ANN), (CHAT, BOB)),
    "lark: HTTP as lark:, then chat, then click": ("lark", (HTTP, LARK + ANN), (CHAT, ANN), (CLICK, BOB)),
    "lark: chat, then HTTP as lark:, then HTTP as lark:": (
        "lark",
        (CHAT, ANN),
        (HTTP, LARK + ANN),
        (HTTP, LARK + BOB),
    ),
    "lark: HTTP bare, then HTTP as lark:, then HTTP bare": (
        "lark",
        (HTTP, ANN),
        (HTTP, LARK + ANN),
        (HTTP, BOB),
    ),
    "dingtalk: HTTP as lark:, then DingTalk, then DingTalk": (
        "dingtalk",
        (HTTP, LARK + ANN),
        (DINGTALK, ANN),
        (DINGTALK, BOB),
    ),
    "dingtalk: DingTalk, then HTTP as lark:, then HTTP as lark:": (
        "dingtalk",
        (DINGTALK, ANN),
        (HTTP, LARK + ANN),
        (HTTP, LARK + BOB),
    ),
    "http session: HTTP bare, then HTTP as lark:, then HTTP as lark:": (
        "http",
        (HTTP, ANN),
        (HTTP, LARK + ANN),
        (HTTP, LARK + BOB),
    ),
    "http session: HTTP as lark:, then HTTP bare, then HTTP bare": (
        "http",
        (HTTP, LARK + ANN),
        (HTTP, ANN),
        (HTTP, BOB),
    ),
}
"""Door walks of one two-person request, as asserted (see the module's docstring)."""


@dataclass
class Stage:
    """An app with Lark and DingTalk on, `Agent:demo` declared as `AGENTS` says."""

    http: httpx.AsyncClient
    lark: LarkEvents
    lark_api: FakeLarkOpenApi
    dingtalk: FakeDingTalk


@asynccontextmanager
async def stage(client: Client, tmp_path: Path, task_queue: str) -> AsyncIterator[Stage]:
    async with lark_open_api() as lark_api, dingtalk_open_api() as fake:
        on = lark_settings(tmp_path, task_queue, lark_api)
        both = on.model_copy(update={"dingtalk": dingtalk_settings(tmp_path, task_queue, fake).dingtalk})
        settings: Settings = declaring(both, AGENTS, tmp_path)
        async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
            yield Stage(http, LarkEvents(verification_token=TOKEN, encrypt_key=ENCRYPT_KEY), lark_api, fake)


@dataclass
class Asked:
    """The pending request of a session: where it waits and how each door reaches it."""

    stage: Stage
    key: str
    interaction_id: str
    chat: str = ""
    """The Lark chat or DingTalk group of the session, if it is a chat's."""

    async def decide(self, door: str, who: str) -> Any:
        """`who` approves through `door`; the door's answer."""
        stage = self.stage
        if door == HTTP:
            return await stage.http.post(
                f"/sessions/{self.key}/interactions/{self.interaction_id}",
                json={"approved": True, "principal": who},
            )
        if door == CHAT:
            return await say(stage.http, stage.lark, stage.lark_api, self.chat, "确认", sender=who)
        if door == CLICK:
            return await click(stage.http, stage.lark, who, "approve", self.key, self.interaction_id)
        assert door == DINGTALK, door
        return await dingtalk.say(stage.dingtalk, self.chat, "确认", sender=who)


async def pending(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    """The session's one pending request (waits for it)."""

    async def probe() -> list[dict[str, Any]]:
        found = await http.get(f"/sessions/{key}")
        return list(found.json()["pending_interactions"]) if found.status_code == 200 else []

    return (await assert_eventually(probe, bool, what=f"a request pending in {key}"))[0]


async def ask(stage: Stage, kind: str) -> Asked:
    """Carol asks for `DELETE_CANCELLED` in a new session of `kind`: its pending request."""
    if kind == "lark":
        chat = new_chat()
        key = f"lark:{chat}"
        await say(stage.http, stage.lark, stage.lark_api, chat, DELETE_CANCELLED, sender=CAROL)
    elif kind == "dingtalk":
        chat, key = dingtalk.new_group()
        await dingtalk.say(stage.dingtalk, chat, DELETE_CANCELLED, sender=CAROL)
    else:
        chat, key = "", f"one-{uuid.uuid4().hex[:8]}"
        body = {"session_key": key, "approvers": SESSION_APPROVERS, "policies": SESSION_POLICIES}
        created = await stage.http.post("/sessions", json=body)
        assert created.status_code == 201, created.text
        sent = await stage.http.post(
            f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": CAROL}
        )
        assert sent.status_code == 202, sent.text
    request = await pending(stage.http, key)
    return Asked(stage, key, request["interaction_id"], chat)


async def audit(http: httpx.AsyncClient, key: str) -> list[tuple[str, str]]:
    entries = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    return [(e["kind"], e["principal"]) for e in entries if e["kind"] != "requested"]


async def audited(http: httpx.AsyncClient, key: str, count: int) -> list[tuple[str, str]]:
    return await assert_eventually(
        lambda: audit(http, key), lambda found: len(found) >= count, what=f"{count} decisions audited"
    )


@pytest.mark.parametrize("row", list(TWO_PEOPLE))
async def test_one_person_under_two_spellings_counts_once_at_every_door(
    client: Client, tmp_path: Path, task_queue: str, count_orders: Callable[[str], int], row: str
) -> None:
    kind, first, again, second = TWO_PEOPLE[row]
    async with stage(client, tmp_path, task_queue) as on:
        asked = await ask(on, kind)
        request = await pending(on.http, asked.key)

        first_answer = await asked.decide(*first)
        if first[0] == HTTP:
            assert first_answer.status_code == 202, first_answer.text  # counted, another must approve
        assert await audited(on.http, asked.key, 1) == [("approval_counted", ANN)]

        again_answer = await asked.decide(*again)
        if again[0] == HTTP:
            assert again_answer.status_code == 409, again_answer.text
            assert "the next approval must come from someone else" in again_answer.json()["detail"]
        elif again[0] == CLICK:
            assert again_answer["toast"]["type"] == "error", again_answer
            assert "must come from someone else" in again_answer["toast"]["content"], again_answer
        assert await audited(on.http, asked.key, 2) == [("approval_counted", ANN), ("rejected", ANN)]
        still = await pending(on.http, asked.key)
        assert (still["interaction_id"], still["approved_by"]) == (asked.interaction_id, [ANN])
        assert count_orders("status = 'cancelled'") == 3, "nothing ran on one person's two approvals"

        await asked.decide(*second)
        assert await audited(on.http, asked.key, 3) == [
            ("approval_counted", ANN),
            ("rejected", ANN),
            ("approved", BOB),
        ]
        await assert_eventually(
            lambda: _rows(count_orders), lambda left: left == 0, what="the statement ran on two people's yes"
        )
        # and the request named each person in one spelling all along
        assert request["approvals_required"] == 2, request
        assert {ANN, BOB} <= set(request["approvers"]), request
        assert not any(name.startswith(LARK) for name in request["approvers"]), request
        assert request["escalate_to"] == ["ou_dee"], "the policy's escalation, one spelling"
        if kind == "http":
            session = (await on.http.get(f"/sessions/{asked.key}")).json()
            assert session["approvers"] == [ANN, BOB], "the session's approvers, one spelling each"


async def _rows(count_orders: Callable[[str], int]) -> int:
    return count_orders("status = 'cancelled'")


async def test_a_non_approver_in_either_spelling_is_refused(
    client: Client, tmp_path: Path, task_queue: str, count_orders: Callable[[str], int]
) -> None:
    async with stage(client, tmp_path, task_queue) as on:
        asked = await ask(on, "http")
        for who in ("ou_mallory", f"{LARK}ou_mallory"):
            refused = await asked.decide(HTTP, who)
            assert refused.status_code == 403, refused.text
        assert await audited(on.http, asked.key, 2) == [("rejected", "ou_mallory")] * 2
        assert count_orders("status = 'cancelled'") == 3


GATES = ["by_graph", "by_gate_bare", "by_gate_prefixed"]


async def test_graph_and_gate_approvers_are_one_person_in_either_spelling(
    client: Client, tmp_path: Path, task_queue: str
) -> None:
    """A graph's approvers (`POST /graphs`) and a blueprint gate's own approvers name ann or bob in
    one spelling; each decides in the other; someone else is refused."""
    async with stage(client, tmp_path, task_queue) as on:
        blueprint = {
            "new_tasks": [
                gated("by_graph"),
                gated("by_gate_bare", approvers=[BOB]),
                gated("by_gate_prefixed", approvers=[f"{LARK}{BOB}"]),
            ]
        }
        body = {"blueprint": blueprint, "approvers": [f"{LARK}{ANN}"], "principal": f"{LARK}{CAROL}"}
        created = await on.http.post("/graphs", json=body)
        assert created.status_code == 201, created.text
        graph = f"/graphs/{created.json()['graph_id']}"
        deciders = {"by_graph": ANN, "by_gate_bare": f"{LARK}{BOB}", "by_gate_prefixed": BOB}
        for gate_task in GATES:
            gate = await _gate(on.http, graph, gate_task)
            assert not any(name.startswith(LARK) for name in gate["approvers"]), gate
            assert gate["requested_by"] == CAROL, gate
            path = f"{graph}/interactions/{gate['interaction_id']}"
            other = await on.http.post(path, json={"approved": True, "principal": f"{LARK}ou_mallory"})
            assert other.status_code == 403, other.text
            decided = await on.http.post(path, json={"approved": True, "principal": deciders[gate_task]})
            assert decided.status_code == 200, decided.text
            assert decided.json()["decided_by"] == deciders[gate_task].removeprefix(LARK)


async def _gate(http: httpx.AsyncClient, graph: str, task_id: str) -> dict[str, Any]:
    async def probe() -> list[dict[str, Any]]:
        found = (await http.get(graph)).json()["pending_interactions"]
        return [p for p in found if p["ask"]["task_id"] == task_id]

    return (await assert_eventually(probe, bool, what=f"the gate of {task_id}"))[0]


async def test_a_relayed_gate_is_decided_at_the_session_by_its_approver_in_the_other_spelling(
    client: Client, tmp_path: Path, task_queue: str
) -> None:
    """The session's approvers name ann with the prefix; the graph its agent proposes relays its
    gate to the session, where ann decides bare (and someone else, prefixed, is refused)."""
    async with stage(client, tmp_path, task_queue) as on:
        key = f"one-{uuid.uuid4().hex[:8]}"
        created = await on.http.post("/sessions", json={"session_key": key, "approvers": [f"{LARK}{ANN}"]})
        assert created.status_code == 201, created.text
        sent = await on.http.post(
            f"/sessions/{key}/messages", json={"content": plan_message(BLUEPRINT), "principal": CAROL}
        )
        assert sent.status_code == 202, sent.text
        gate = await pending(on.http, key)
        assert gate["ask"]["kind"] == "gate" and gate["approvers"] == [ANN], gate
        path = f"/sessions/{key}/interactions/{gate['interaction_id']}"
        other = await on.http.post(path, json={"approved": True, "principal": f"{LARK}ou_mallory"})
        assert other.status_code == 403, other.text
        decided = await on.http.post(path, json={"approved": True, "principal": ANN})
        assert decided.status_code == 200, decided.text
        graph = f"/graphs/{gate['task_id'].removeprefix('graph:')}"

        async def publish() -> str:
            tasks = (await on.http.get(graph)).json()["tasks"]
            return str(next(t["status"] for t in tasks if t["task_id"] == "publish"))

        await assert_eventually(publish, lambda status: status == "completed", what="the gate opened")


DELETE_ONE = "DELETE FROM orders WHERE id = 2"


@pytest.mark.parametrize(
    ("maker", "approver"),
    [(f"{LARK}{ANN}", ANN), (ANN, f"{LARK}{ANN}")],
    ids=["maker prefixed", "approver prefixed"],
)
async def test_a_rule_s_maker_is_the_approver_in_the_other_spelling(
    client: Client,
    tmp_path: Path,
    task_queue: str,
    count_orders: Callable[[str], int],
    maker: str,
    approver: str,
) -> None:
    """An allow rule does no more than its maker could approve: made by ann in one spelling, it
    allows a call whose approvers name her in the other (and not one whose approvers name bob)."""
    async with stage(client, tmp_path, task_queue) as on:
        rule = {
            "tool": "sql",
            "decision": "allow",
            "match": {"sql_kind": "DELETE", "sql_table": "orders"},
            "scope": "project",
            "project": "/bank",
            "created_by": maker,
        }
        saved = await on.http.post("/rules", json=rule)
        assert saved.status_code == 201, saved.text
        assert saved.json()["created_by"] == ANN
        for approvers, runs in (([BOB], False), ([approver], True)):
            key = f"one-{uuid.uuid4().hex[:8]}"
            one = {"approvers": approvers, "approvals_required": 1}  # the agent's is 2 (keys off: lowered)
            body = {"session_key": key, "project": "/bank", "policies": {"sql": one}}
            assert (await on.http.post("/sessions", json=body)).status_code == 201
            turn = await on.http.post(
                f"/sessions/{key}/messages?wait=true", json={"content": DELETE_ONE, "principal": CAROL}
            )
            assert turn.status_code in (200, 202), turn.text
            assert (turn.json()["status"] == "completed") is runs, turn.json()
            assert count_orders("id = 2") == (0 if runs else 1)
