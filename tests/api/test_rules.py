"""Approval rules over HTTP: managed by role, read by the workers at every assessment, named in the
audit with their text as it was; profiles as named sets of them. Who owns which rule, and ids that
are never reused: `test_rule_owners.py`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings

from ..support import serve
from .test_sessions import new_key

KEYS = "k-view:vera:viewer,k-ok:ann:approver,k-admin:ada:admin"
DELETE_ONE = "DELETE FROM orders WHERE id = 2"
UPDATE_ONE = "UPDATE orders SET status = 'shipped' WHERE id = 1"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def say(http: httpx.AsyncClient, key: str, content: str) -> dict[str, Any]:
    """Send a message and wait for the turn: its answer, or what it waits for."""
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": content, "principal": "alice"}
    )
    assert sent.status_code in (200, 202), sent.text
    answer: dict[str, Any] = sent.json()
    return answer


def given(match: dict[str, Any]) -> dict[str, Any]:
    """A rule match's fields that are set."""
    return {name: value for name, value in match.items() if value is not None}


async def audit_kinds(http: httpx.AsyncClient, key: str) -> list[tuple[str, str | None, str | None]]:
    trail = (await http.get(f"/sessions/{key}/audit")).json()
    return [(e["kind"], e.get("principal"), e.get("comment")) for e in trail["entries"]]


async def test_only_admins_make_global_rules_approvers_make_project_ones_anyone_reads_them(
    client: Client, settings: Settings, worker: None
) -> None:
    app = create_app(
        settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})}), client=client
    )
    rule = {
        "tool": "sql",
        "decision": "deny",
        "match": {"sql_kind": "DROP"},
        "scope": "global",
        "reason": "no drops",
    }
    async with serve(app) as http:
        by_viewer = await http.post("/rules", json=rule, headers=bearer("k-view"))
        assert by_viewer.status_code == 403 and "vera has role viewer" in by_viewer.json()["detail"]
        by_approver = await http.post("/rules", json=rule, headers=bearer("k-ok"))
        assert by_approver.status_code == 403, by_approver.text
        assert "a global rule needs admin" in by_approver.json()["detail"]
        made = await http.post("/rules", json={**rule, "created_by": "someone"}, headers=bearer("k-admin"))
        assert made.status_code == 201, made.text
        saved = made.json()
        global_id = saved["rule_id"]
        assert (saved["created_by"], saved["scope"], saved["reason"]) == (
            "ada",
            "global",
            "no drops",
        )
        assert saved["match"]["sql_kind"] == "DROP" and saved["created_at"].startswith("20")
        project = {
            "tool": "terminal",
            "decision": "allow",
            "match": {"command_prefix": "make test"},
            "scope": "project",
            "project": "/repo",
        }
        mine = await http.post("/rules", json=project, headers=bearer("k-ok"))
        assert mine.status_code == 201 and mine.json()["created_by"] == "ann"
        project_id = mine.json()["rule_id"]
        listed = await http.get("/rules", headers=bearer("k-view"))
        assert [r["rule_id"] for r in listed.json()] == [global_id, project_id]
        only = await http.get(
            "/rules", params={"scope": "project", "project": "/repo"}, headers=bearer("k-view")
        )
        assert [r["rule_id"] for r in only.json()] == [project_id]
        with_profile = await http.get(
            "/rules", params={"profile": "restricted", "tool": "none"}, headers=bearer("k-view")
        )
        assert [(r["rule_id"], r["decision"]) for r in with_profile.json()] == [
            ("profile:restricted:1", "deny")
        ]
        assert (await http.delete(f"/rules/{global_id}", headers=bearer("k-ok"))).status_code == 403
        deleted = (await http.delete(f"/rules/{project_id}", headers=bearer("k-ok"))).json()
        assert (deleted["rule_id"], deleted["deleted_by"]) == (project_id, "ann")
        gone = await http.delete(f"/rules/{project_id}", headers=bearer("k-admin"))
        assert gone.status_code == 404 and gone.json()["detail"].startswith(
            f"rule '{project_id}' was deleted by ann at "
        )
        unknown = await http.delete("/rules/rule_9", headers=bearer("k-admin"))
        assert (
            unknown.status_code == 404
            and unknown.json()["detail"] == "no rule 'rule_9'; GET /rules lists them"
        )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"tool": "sql", "decision": "maybe"}, "decision"),
        (
            {
                "tool": "sql",
                "decision": "allow",
                "scope": "global",
                "match": {"command_prefix": "x", "sql_kind": "DELETE"},
            },
            "match: give one of",
        ),
        (
            {"tool": "sql", "decision": "allow", "scope": "project"},
            "project: scope `project` needs the project",
        ),
        ({"tool": "sql", "decision": "allow", "scope": "global", "match": {"glob": "*"}}, "glob"),
        ({"tool": "sql", "decision": "allow"}, "scope"),
    ],
)
async def test_a_bad_rule_is_422_naming_what_is_wrong(
    http: httpx.AsyncClient, body: dict[str, Any], said: str
) -> None:
    answer = await http.post("/rules", json=body)
    assert answer.status_code == 422 and said in answer.text, answer.text
    assert (await http.get("/rules")).json() == [], "nothing was saved"


async def test_a_rule_saved_mid_session_decides_the_next_call_and_the_audit_names_it(
    http: httpx.AsyncClient,
) -> None:
    key = new_key()
    first = await say(http, key, DELETE_ONE)
    assert first["status"] == "waiting" and first["pending"]["interaction_id"] == "tool_1", first
    denied_by_person = await http.post(
        f"/sessions/{key}/interactions/tool_1", json={"approved": False, "principal": "bob"}
    )
    assert denied_by_person.status_code == 200
    rule = {
        "tool": "sql",
        "decision": "deny",
        "match": {"sql_kind": "DELETE", "sql_table": "orders"},
        "scope": "global",
        "reason": "orders are kept",
        "created_by": "carol",
    }
    saved = await http.post("/rules", json=rule)
    assert saved.status_code == 201, saved.text
    rule_id = saved.json()["rule_id"]
    second = await say(http, key, DELETE_ONE)
    assert second["status"] == "completed", second
    answer = second["answer"]  # how the audit words the rule's text is the workflow's (its own tests)
    assert answer.startswith(
        f'I did not run sql: denied by rule:{rule_id} (an approval rule refuses it) — "denied by rule {rule_id} '
        "(deny sql DELETE orders"
    ), answer
    assert answer.endswith('sql: DELETE FROM orders WHERE id = 2 — orders are kept".'), answer
    kinds = await audit_kinds(http, key)
    kind, principal, comment = kinds[-1]
    assert (kind, principal) == ("rule_denied", f"rule:{rule_id}")
    said_then = (
        f"denied by rule {rule_id} (deny sql DELETE orders; matching "
        '{"sql_kind": "DELETE", "sql_table": "orders"}; everywhere; made by carol): '
        "sql: DELETE FROM orders WHERE id = 2 — orders are kept"
    )
    assert comment == said_then, "the audit keeps the rule's text: what it matched, where, who made it, why"
    assert [k for k, _, _ in kinds].count("requested") == 1, "the rule asked nobody"
    assert (await http.delete(f"/rules/{rule_id}")).status_code == 200
    again = await http.post("/rules", json={**rule, "decision": "allow", "reason": "changed our minds"})
    assert again.json()["rule_id"] != rule_id, "a rule's id is never given to another"
    assert (await audit_kinds(http, key))[-1][2] == said_then, "what the rule said then stays as it was"


async def test_a_project_allow_runs_its_calls_without_asking_and_only_in_that_project(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    rule = {
        "tool": "sql",
        "decision": "allow",
        "match": {"sql_kind": "UPDATE", "sql_table": "orders"},
        "scope": "project",
        "project": "/shop",
    }
    saved = await http.post("/rules", json=rule)
    assert saved.status_code == 201, saved.text
    here, elsewhere = new_key(), new_key()
    for key, project in ((here, "/shop"), (elsewhere, "/blog")):
        assert (
            await http.post("/sessions", json={"session_key": key, "project": project})
        ).status_code == 201
    ran = await say(http, here, UPDATE_ONE)
    assert ran["status"] == "completed" and ran["answer"] == "UPDATE done: 1 row affected.", ran
    assert count_orders("id = 1 AND status = 'shipped'") == 1
    assert (await audit_kinds(http, here))[-1][:2] == ("rule_allowed", f"rule:{saved.json()['rule_id']}")
    asked = await say(http, elsewhere, UPDATE_ONE)
    assert asked["status"] == "waiting" and asked["pending"]["content"]["tool_name"] == "sql", asked


async def test_an_ask_rule_asks_for_what_would_run_freely_and_says_which_rule_asks(
    http: httpx.AsyncClient,
) -> None:
    rule = {
        "tool": "sql",
        "decision": "ask",
        "match": {"sql_table": "orders"},
        "scope": "user",
        "user": "alice",
        "reason": "orders are sensitive",
        "created_by": "olga",
    }
    saved = await http.post("/rules", json=rule)
    assert saved.status_code == 201, saved.text
    key = new_key()
    assert (await http.post("/sessions", json={"session_key": key, "user": "alice"})).status_code == 201
    asked = await say(http, key, "SELECT customer FROM orders WHERE id = 1")
    assert asked["status"] == "waiting", asked
    shown = asked["pending"]["content"]["rule"]
    assert {**shown, "match": given(shown["match"])} == {
        "rule_id": saved.json()["rule_id"],
        "decision": "ask",
        "description": "ask sql orders for alice",
        "reason": "orders are sensitive",
        "created_by": "olga",
        "scope": "user",
        "project": None,
        "user": "alice",
        "match": {"sql_table": "orders"},
    }, "the rule's text as it was when it decided"


async def test_the_restricted_profile_denies_writes_and_reads_on_the_enterprise_one_asks_for_everything(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    restricted, enterprise = new_key(), new_key()
    made = await http.post("/sessions", json={"session_key": restricted, "profile": "restricted"})
    assert made.status_code == 201 and (made.json()["profile"], made.json()["sandbox"]) == (
        "restricted",
        "read-only",
    )
    assert (
        await http.post("/sessions", json={"session_key": enterprise, "profile": "enterprise"})
    ).status_code == 201
    before = count_orders("1 = 1")
    denied = await say(http, restricted, DELETE_ONE)
    assert denied["status"] == "completed" and "denied by rule:profile:restricted:1" in denied["answer"], (
        denied
    )
    assert count_orders("1 = 1") == before
    read = await say(http, restricted, "SELECT customer FROM orders WHERE id = 1")
    assert read["answer"] == "SELECT returned 1 row:\ncustomer\nAlice"
    asked = await say(http, enterprise, "SELECT customer FROM orders WHERE id = 1")
    assert (
        asked["status"] == "waiting"
        and asked["pending"]["content"]["rule"]["rule_id"] == "profile:enterprise:1"
    )
    unknown = await http.post("/sessions", json={"session_key": new_key(), "profile": "lax"})
    assert unknown.status_code == 422
    assert (
        unknown.json()["detail"]
        == "profile: profile 'lax' does not exist; known: default, restricted, enterprise"
    )


async def test_an_approval_that_edits_the_call_into_one_a_rule_denies_runs_nothing(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    rule = {
        "tool": "sql",
        "decision": "deny",
        "match": {"sql_kind": "DROP"},
        "scope": "global",
        "reason": "tables stay",
    }
    assert (await http.post("/rules", json=rule)).status_code == 201
    key = new_key()
    asked = await say(http, key, DELETE_ONE)
    edit = {"arguments": {"sql": "DROP TABLE orders"}}
    answered = await http.post(
        f"/sessions/{key}/interactions/{asked['pending']['interaction_id']}",
        json={"approved": True, "principal": "bob", "response_data": edit},
    )
    assert answered.status_code == 200, answered.text
    assert (
        answered.json()["tool_result"]["error"]
        == "not run: an approval rule refuses the edited call (deny sql DROP)"
    )
    assert count_orders("1 = 1") > 0, "the table is still there"
    kinds = [kind for kind, _, _ in await audit_kinds(http, key)]
    assert kinds == ["requested", "approved", "edited", "rule_denied"]


async def test_allow_always_offers_a_rule_for_the_call_takes_an_edit_and_refuses_a_bad_one(
    http: httpx.AsyncClient,
) -> None:
    """The console's "Allow always": the offer for a waiting call, the person's edit, a bad edit."""
    call = {"tool": "sql", "arguments": {"sql": DELETE_ONE}}
    offered = await http.post("/rule-offers", json=call)
    assert offered.status_code == 200, offered.text
    assert {**offered.json(), "match": given(offered.json()["match"])} == {
        "tool": "sql",
        "match": {"sql_kind": "DELETE", "sql_table": "orders"},
        "label": "SQL kind and table",
        "line": "DELETE orders",
    }
    widened = await http.post("/rule-offers", json={**call, "line": " delete "})
    assert given(widened.json()["match"]) == {"sql_kind": "DELETE"}, "every DELETE, whatever the table"
    bad = await http.post("/rule-offers", json={**call, "line": "DELETE FROM orders"})
    assert bad.status_code == 422 and bad.json()["detail"].startswith("line: 'DELETE FROM orders':"), bad.text
    piped = await http.post("/rule-offers", json={"tool": "terminal", "arguments": {"command": "ls | sh"}})
    assert given(piped.json()["match"]) == {"argument": "command", "pattern": "ls | sh"}, (
        "only that exact command"
    )
    empty = await http.post("/rule-offers", json={"tool": "sql", "arguments": {}})
    assert empty.status_code == 422 and "would allow every call of sql" in empty.json()["detail"], empty.text
    assert (await http.get("/rules")).json() == [], "an offer saves nothing"


async def test_an_allow_rule_does_no_more_than_its_maker_could_approve(
    http: httpx.AsyncClient, count_orders: Any
) -> None:
    """A project rule saved by someone who is not among a call's approvers, or for a call that needs
    two approvers, does not run it unasked: the call is asked for, and the request says why."""
    allow = {
        "tool": "sql",
        "decision": "allow",
        "match": {"sql_kind": "DELETE", "sql_table": "orders"},
        "scope": "project",
        "project": "/bank",
        "created_by": "ann",
    }
    saved = await http.post("/rules", json=allow)
    assert saved.status_code == 201, saved.text
    rule_id = saved.json()["rule_id"]
    for key, policies, why in (
        (new_key(), {"sql": {"approvers": ["oscar"]}}, "who is not among this call's approvers (oscar)"),
        (new_key(), {"sql": {"approvals_required": 2}}, "allows no call that needs 2 approvers"),
    ):
        created = await http.post(
            "/sessions", json={"session_key": key, "project": "/bank", "policies": policies}
        )
        assert created.status_code == 201, created.text
        asked = await say(http, key, DELETE_ONE)
        assert asked["status"] == "waiting", asked
        assert (
            f"rule {rule_id}" in asked["pending"]["content"]["reason"]
            and why in asked["pending"]["content"]["reason"]
        )
        assert count_orders("id = 2") == 1, "nothing ran unasked"
    free = new_key()  # where anyone may approve, the rule decides as before
    assert (await http.post("/sessions", json={"session_key": free, "project": "/bank"})).status_code == 201
    ran = await say(http, free, DELETE_ONE)
    assert ran["status"] == "completed" and count_orders("id = 2") == 0, ran
