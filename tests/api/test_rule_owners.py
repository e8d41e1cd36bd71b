"""Rules have owners (issue 45): who may save a rule of each scope and delete one, over HTTP with
`SYNAPSE_API_KEYS` set (and with keys off, where the name given is recorded). Every cell of the
table is allowed, or a 403 naming the rule that refuses it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from api.main import create_app
from api.routes.rules import refusal_to_delete, refusal_to_save
from contracts import ApprovalRule, NewRule, RuleScope
from core.rules.store import RuleStore
from core.security import Caller, Role
from core.settings import Settings

from ..support import serve

KEYS = "k-vera:vera:viewer,k-otto:otto:operator,k-ann:ann:approver,k-ada:ada:admin"
KEY_OF = {"vera": "k-vera", "otto": "k-otto", "ann": "k-ann", "ada": "k-ada"}
OTHER = "zed"
"""Someone else: the person of `user-other` rules and the maker of `other's` rules."""

SCOPES = ("user-self", "user-other", "project", "global")
ACTIONS = ("save", "delete own", "delete other's")
OK = "ok"

ROLE_REFUSAL = "{who} has role {role}; this needs approver or higher"
NOT_FOR_OTHERS = "{who} may save user rules only for {who} (zed's need an admin)"
NOT_GLOBAL = "{who} has role approver; a global rule needs admin"
NOT_THEIRS = "{who} may delete only the rules {who} made; {rule_id} was made by zed (an admin may delete any)"
NOT_NOW = "{who} made {rule_id} but may not delete it now: "

EXPECTED: dict[str, dict[tuple[str, str], str]] = {
    "vera": {(scope, action): ROLE_REFUSAL for scope in SCOPES for action in ACTIONS},
    "otto": {(scope, action): ROLE_REFUSAL for scope in SCOPES for action in ACTIONS},
    "ann": {
        ("user-self", "save"): OK,
        ("user-self", "delete own"): OK,
        ("user-self", "delete other's"): NOT_THEIRS,
        ("user-other", "save"): NOT_FOR_OTHERS,
        ("user-other", "delete own"): NOT_NOW + NOT_FOR_OTHERS,
        ("user-other", "delete other's"): NOT_THEIRS,
        ("project", "save"): OK,
        ("project", "delete own"): OK,
        ("project", "delete other's"): NOT_THEIRS,
        ("global", "save"): NOT_GLOBAL,
        ("global", "delete own"): NOT_NOW + NOT_GLOBAL,
        ("global", "delete other's"): NOT_THEIRS,
    },
    "ada": {(scope, action): OK for scope in SCOPES for action in ACTIONS},
    "kim (keys off)": {(scope, action): OK for scope in SCOPES for action in ACTIONS},
}
"""Each cell: OK, or the start of the 403's detail (`{who}`, `{role}`, `{rule_id}` filled in)."""


def body(scope: str, who: str, claimed: str | None = None) -> dict[str, Any]:
    """A rule of `scope` as `who` would send it, naming `claimed` as its maker (a key ignores it)."""
    rule: dict[str, Any] = {
        "tool": "sql",
        "decision": "deny",
        "reason": "table test",
        "created_by": claimed,
    }
    if scope == "user-self":
        return {**rule, "scope": "user", "user": who}
    if scope == "user-other":
        return {**rule, "scope": "user", "user": OTHER}
    if scope == "project":
        return {**rule, "scope": "project", "project": "/shop"}
    return {**rule, "scope": "global"}


@pytest.fixture
async def keyed(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The real app on loopback with API keys on (no worker: rules need none)."""
    with_keys = settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})})
    async with serve(create_app(with_keys, client=client)) as http:
        yield http


@pytest.fixture
async def open_api(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The real app on loopback with keys off: every caller is an admin, known by the name given."""
    async with serve(create_app(settings, client=client)) as http:
        yield http


@pytest.fixture
def seed(settings: Settings) -> Callable[[str, str, str], ApprovalRule]:
    """Save a rule straight into the app's store (one made earlier, e.g. before keys were on)."""
    store = RuleStore.at(settings.rules_url, settings.data_dir)

    def saved(scope: str, caller: str, maker: str) -> ApprovalRule:
        return store.add(NewRule.model_validate(body(scope, caller, maker)))

    return saved


async def table_of(
    http: httpx.AsyncClient,
    seed: Callable[[str, str, str], ApprovalRule],
    who: str,
    headers: dict[str, str],
    claimed: str,
) -> dict[tuple[str, str], str]:
    """Every cell for `who`, naming `claimed` as the one who saves or deletes (with keys on the key's
    principal is recorded instead): OK (checking what was recorded), else the 403's detail."""
    found: dict[tuple[str, str], str] = {}
    for scope in SCOPES:
        made = await http.post("/rules", json=body(scope, who, claimed), headers=headers)
        if made.status_code == 201:
            assert made.json()["created_by"] == who, made.text  # the key's principal, or the name given
            found[(scope, "save")] = OK
        else:
            assert made.status_code == 403, made.text
            found[(scope, "save")] = made.json()["detail"]
        for action, maker in (("delete own", who), ("delete other's", OTHER)):
            rule = seed(scope, who, maker)
            gone = await http.delete(f"/rules/{rule.rule_id}", params={"principal": claimed}, headers=headers)
            if gone.status_code == 200:
                assert (gone.json()["rule_id"], gone.json()["deleted_by"]) == (rule.rule_id, who), gone.text
                listed = await http.get("/rules", headers=headers)
                assert rule.rule_id not in [r["rule_id"] for r in listed.json()]
                looked = await http.get(f"/rules/{rule.rule_id}", headers=headers)
                assert looked.status_code == 404 and f"was deleted by {who} at " in looked.json()["detail"]
                found[(scope, action)] = OK
            else:
                assert gone.status_code == 403, gone.text
                detail = gone.json()["detail"]
                found[(scope, action)] = detail.replace(rule.rule_id, "{rule_id}")
                still = await http.get(f"/rules/{rule.rule_id}", headers=headers)
                assert still.status_code == 200, "a refused delete deletes nothing"
    return found


def expected_for(who: str, role: str) -> dict[tuple[str, str], str]:
    return {
        cell: said.replace("{who}", who).replace("{role}", role)
        for cell, said in EXPECTED[who if who in EXPECTED else f"{who} (keys off)"].items()
    }


def agrees(found: dict[tuple[str, str], str], expected: dict[tuple[str, str], str]) -> dict[Any, Any]:
    """The cells where a refusal does not start as expected, or an outcome differs."""
    return {
        cell: (found[cell], expected[cell])
        for cell in expected
        if not (
            found[cell] == expected[cell] or (expected[cell] != OK and found[cell].startswith(expected[cell]))
        )
    }


@pytest.mark.parametrize(
    ("who", "role"), [("vera", "viewer"), ("otto", "operator"), ("ann", "approver"), ("ada", "admin")]
)
async def test_who_may_save_and_delete_rules_of_each_scope_with_keys_on(
    keyed: httpx.AsyncClient, seed: Callable[[str, str, str], ApprovalRule], who: str, role: str
) -> None:
    headers = {"Authorization": f"Bearer {KEY_OF[who]}"}
    found = await table_of(keyed, seed, who, headers, "mallory")  # a name given: ignored
    assert agrees(found, expected_for(who, role)) == {}


async def test_with_keys_off_anyone_may_and_the_name_given_is_recorded(
    open_api: httpx.AsyncClient, seed: Callable[[str, str, str], ApprovalRule]
) -> None:
    found = await table_of(open_api, seed, "kim", {}, "kim")
    assert agrees(found, expected_for("kim", "admin")) == {}

    nameless = body("global", "kim")
    made = await open_api.post("/rules", json=nameless)
    assert made.status_code == 201 and made.json()["created_by"] == "anonymous", made.text
    gone = await open_api.delete(f"/rules/{made.json()['rule_id']}")
    assert gone.status_code == 200 and gone.json()["deleted_by"] == "anonymous", gone.text


async def test_a_rule_without_a_scope_is_422_naming_scope(open_api: httpx.AsyncClient) -> None:
    """A rule that forgot its scope would have bound every session: it is refused, never global."""
    refused = await open_api.post("/rules", json={"tool": "sql", "decision": "deny"})
    assert refused.status_code == 422, refused.text
    assert "scope" in refused.json()["detail"]
    assert [error["loc"] for error in refused.json()["errors"]] == [["body", "scope"]]
    assert (await open_api.get("/rules")).json() == [], "nothing was saved"


async def test_a_deleted_rules_id_is_never_reused_and_says_who_deleted_it(
    keyed: httpx.AsyncClient,
) -> None:
    admin = {"Authorization": "Bearer k-ada"}
    rule = {"tool": "sql", "decision": "deny", "scope": "global", "match": {"sql_kind": "DROP"}}
    first = (await keyed.post("/rules", json=rule, headers=admin)).json()
    gone = await keyed.delete(f"/rules/{first['rule_id']}", headers=admin)
    assert gone.status_code == 200 and gone.json()["deleted_by"] == "ada" and gone.json()["deleted_at"]
    second = (await keyed.post("/rules", json=rule, headers=admin)).json()
    assert second["rule_id"] != first["rule_id"]
    assert [r["rule_id"] for r in (await keyed.get("/rules", headers=admin)).json()] == [second["rule_id"]]
    again = await keyed.delete(f"/rules/{first['rule_id']}", headers=admin)
    assert again.status_code == 404, again.text
    assert again.json()["detail"].startswith(f"rule {first['rule_id']!r} was deleted by ada at ")
    unknown = await keyed.get("/rules/rule_01JDQ8Z5V7C3M2K9T4XWB6N1RA", headers=admin)
    assert unknown.status_code == 404 and unknown.json()["detail"].startswith("no rule ")
    assert (await keyed.get("/rules/rule_01jdq8z5v7c3m2k9t4xwb6n1ra", headers=admin)).status_code == 422


def test_a_project_rule_needs_an_approver_who_may_act_in_that_project() -> None:
    """A key limited to some projects saves and deletes rules only of those, an admin's too."""
    blog_only = Caller(principal="ann", role=Role.approver, projects=frozenset({"/blog"}))
    shop = NewRule(tool="sql", decision="allow", scope=RuleScope.PROJECT, project="/shop")
    assert refusal_to_save(blog_only, "ann", shop) == (
        "ann may not act in project '/shop' (the key's projects: /blog); "
        "a project rule needs one of that project's approvers or an admin without projects"
    )
    assert refusal_to_save(blog_only, "ann", shop.model_copy(update={"project": "/blog"})) is None
    made = ApprovalRule(
        **shop.model_dump(exclude={"created_by"}),
        created_by="ann",
        rule_id="rule_1",
        created_at="2026-11-27T10:00:00Z",
    )
    assert (refusal_to_delete(blog_only, "ann", made) or "").startswith(
        "ann made rule_1 but may not delete it now: ann may not act in project '/shop'"
    )
    admin_of_blog = Caller(principal="ada", role=Role.admin, projects=frozenset({"/blog"}))
    assert (refusal_to_save(admin_of_blog, "ada", shop) or "").startswith(
        "ada may not act in project '/shop'"
    )
    assert refusal_to_delete(admin_of_blog, "ada", made) is not None
    admin = Caller(principal="ada", role=Role.admin)
    assert refusal_to_save(admin, "ada", shop) is None and refusal_to_delete(admin, "ada", made) is None
