"""Issue 45: who is recorded, at every door that records a person, with API keys off and on.

`expected` is the identity table as asserted: with keys off the name given (a body's `principal`, a
query's `?principal=`, a rule's `created_by`) is recorded, `anonymous` when none was given; with keys
on the key's principal, whatever the body names. Each mode runs every operation once on one app (the
Lark channel on, for the HTTP message into a Lark chat's session, which is still an `http` request).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings
from tests.fakes.lark_events import LarkEvents
from tests.fakes.lark_open_api import FakeLarkOpenApi, lark_open_api
from worker import build_worker

from ..conftest import assert_eventually
from ..support import serve
from ..workflows.graph.flows import gated, task
from .lark.conftest import ALICE, ENCRYPT_KEY, TOKEN, lark_settings
from .lark.test_inbound import new_chat, say
from .test_sessions import DELETE_CANCELLED

KEYS = "k-view:vera:viewer,k-op:otto:operator,k-ok:ann:approver,k-adm:adam:admin"
ADMIN_KEY = {"Authorization": "Bearer k-adm"}
"""With keys on every operation is sent as adam (an admin may do them all)."""


MODES = {
    "keys off, a name given": (None, "carol", "carol"),
    "keys off, no name": (None, None, "anonymous"),
    "keys on, the body names someone else": (KEYS, "mallory", "adam"),
}
"""Mode: (SYNAPSE_API_KEYS, the name the requests give, who must be recorded)."""

OPERATIONS = {
    "message → requested": "http",
    "decision (session)": "http",
    "grant revoked": "http",
    "session paused": "http",
    "session resumed": "http",
    "session cancelled": "http",
    "graph posted → gate requested": "http",
    "graph paused": "http",
    "graph resumed": "http",
    "graph rollback": "http",
    "blueprint changed": "http",
    "decision (graph gate)": "http",
    "rule created_by": None,
    "rule deleted_by": None,
    "HTTP message into a Lark chat's session → requested": "http",
}
"""Operation: the channel its record names (None: only who is compared; a rule records no channel)."""


def expected(who: str) -> dict[str, str]:
    """The identity table of one mode."""
    return {op: f"{who} via {channel}" if channel else who for op, channel in OPERATIONS.items()}


def named(who: str | None) -> dict[str, Any]:
    """A body's (or a query's) `principal`, if one is given."""
    return {"principal": who} if who is not None else {}


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, (response.request.method, response.request.url, response.text)
    return response.json()


async def entry(http: httpx.AsyncClient, path: str, kind: str, interaction_id: str | None = None) -> str:
    """`who via channel` of the first `kind` entry of the audit trail at `path` (polled)."""

    async def probe() -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = ok(await http.get(path))["entries"]
        return [e for e in entries if e["kind"] == kind and interaction_id in (None, e["interaction_id"])]

    found = (await assert_eventually(probe, bool, what=f"a {kind} entry in {path}"))[0]
    return f"{found['principal']} via {found['channel']}"


async def pending(http: httpx.AsyncClient, path: str, kind: str) -> dict[str, Any]:
    async def probe() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await http.get(path)).json().get("pending_interactions", [])
        return [p for p in found if p["ask"]["kind"] == kind]

    return (await assert_eventually(probe, bool, what=f"a pending {kind} at {path}"))[0]


async def session_ops(http: httpx.AsyncClient, who: str | None) -> dict[str, str]:
    """A request, its decision with a grant, the grant revoked, pause, resume, cancel."""
    key = f"ids-{uuid.uuid4().hex[:8]}"
    audit = f"/sessions/{key}/audit"
    ok(await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, **named(who)}), 202)
    asked = (await pending(http, f"/sessions/{key}", "tool_approval"))["interaction_id"]
    decision = {"approved": True, "response_data": {"grant": "session"}, **named(who)}
    outcome = ok(await http.post(f"/sessions/{key}/interactions/{asked}", json=decision))
    grant = outcome["grant_id"]
    revoked = ok(await http.delete(f"/sessions/{key}/grants/{grant}", params=named(who)))
    found = {
        "message → requested": await entry(http, audit, "requested", asked),
        "decision (session)": f"{outcome['decided_by']} via {outcome['channel']}",
        "grant revoked": f"{revoked['revoked_by']} via http",
    }
    assert await entry(http, audit, "approved", asked) == found["decision (session)"]
    assert await entry(http, audit, "revoked") == found["grant revoked"]
    for action, kind in (("pause", "paused"), ("resume", "resumed"), ("cancel", "cancelled")):
        ok(await http.post(f"/sessions/{key}/{action}", json=named(who) or None))
        found[f"session {kind}"] = await entry(http, audit, kind)
    return found


async def graph_ops(http: httpx.AsyncClient, who: str | None) -> dict[str, str]:
    """A graph posted (its gate's request), paused, resumed, a task rolled back, the blueprint
    changed, the gate decided."""
    blueprint = {"new_tasks": [gated("hold"), task("first", input_data={"echo": "v1"})]}
    created = ok(await http.post("/graphs", json={"blueprint": blueprint, **named(who)}), 201)
    graph_id, first = created["graph_id"], created["tasks"]["first"]
    path, audit = f"/graphs/{graph_id}", f"/graphs/{graph_id}/audit"
    gate = (await pending(http, path, "gate"))["interaction_id"]

    async def first_done() -> bool:
        tasks = ok(await http.get(path))["tasks"]
        return any(t["task_id"] == "first" and t["status"] == "completed" for t in tasks)

    await assert_eventually(first_done, bool, what="first done")
    found = {"graph posted → gate requested": await entry(http, audit, "requested", gate)}
    for action, kind in (("pause", "paused"), ("resume", "resumed")):
        ok(await http.post(f"{path}/{action}", json=named(who) or None))
        found[f"graph {kind}"] = await entry(http, audit, kind)
    rollback = {
        "intervention_type": "ROLLBACK_AND_MODIFY",
        "target_task_id": first,
        "new_input_data": {"echo": "v2"},
        "comment": "wrong data",
        **named(who),
    }
    ok(await http.post(f"{path}/interventions", json=rollback))
    found["graph rollback"] = await entry(http, audit, "rollback_and_modify")
    extended = {"new_tasks": [task("later")]}
    ok(await http.post(f"{path}/blueprint", json=extended, params=named(who)))
    found["blueprint changed"] = await changed_by(http, audit)
    outcome = ok(await http.post(f"{path}/interactions/{gate}", json={"approved": True, **named(who)}))
    found["decision (graph gate)"] = f"{outcome['decided_by']} via {outcome['channel']}"
    assert await entry(http, audit, "approved", gate) == found["decision (graph gate)"]
    return found


async def changed_by(http: httpx.AsyncClient, audit: str) -> str:
    """Who the second `extended` entry names, and through which channel (the first is the graph's
    own blueprint)."""

    async def probe() -> list[dict[str, Any]]:
        return [e for e in ok(await http.get(audit))["entries"] if e["kind"] == "extended"]

    found = await assert_eventually(probe, lambda e: len(e) >= 2, what="the blueprint change audited")
    return f"{found[1]['principal']} via {found[1]['channel']}"


async def rule_ops(http: httpx.AsyncClient, who: str | None) -> dict[str, str]:
    rule = {"tool": "sql", "decision": "deny", "scope": "global", "match": {"sql_kind": "DROP"}}
    made = ok(await http.post("/rules", json={**rule, **({"created_by": who} if who else {})}), 201)
    gone = ok(await http.delete(f"/rules/{made['rule_id']}", params=named(who)))
    return {"rule created_by": made["created_by"], "rule deleted_by": gone["deleted_by"]}


async def lark_session_ops(http: httpx.AsyncClient, api: FakeLarkOpenApi, who: str | None) -> dict[str, str]:
    """A Lark chat's session (started by a member in Lark), then a request over HTTP into it."""
    lark = LarkEvents(verification_token=TOKEN, encrypt_key=ENCRYPT_KEY)
    chat = new_chat()
    key = f"lark:{chat}"
    await say(http, lark, api, chat, "hello", sender=ALICE)
    await assert_eventually(lambda: http.get(f"/sessions/{key}"), lambda r: r.status_code == 200)
    assert ok(await http.get(f"/sessions/{key}"))["channel"] == "lark"
    ok(await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, **named(who)}), 202)
    asked = (await pending(http, f"/sessions/{key}", "tool_approval"))["interaction_id"]
    return {
        "HTTP message into a Lark chat's session → requested": await entry(
            http, f"/sessions/{key}/audit", "requested", asked
        )
    }


@pytest.mark.parametrize("mode", list(MODES))
async def test_who_is_recorded(client: Client, tmp_path: Path, task_queue: str, mode: str) -> None:
    keys, given, recorded = MODES[mode]
    async with lark_open_api() as api:
        lark_on = lark_settings(tmp_path, task_queue, api)
        settings: Settings = lark_on.model_copy(update={"api": ApiSettings(keys=keys)})
        async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
            if keys is not None:
                http.headers.update(ADMIN_KEY)
            found = {
                **await session_ops(http, given),
                **await graph_ops(http, given),
                **await rule_ops(http, given),
                **await lark_session_ops(http, api, given),
            }
    assert found == expected(recorded)
