"""With SYNAPSE_API_KEYS set, the key decides who the caller is and what it may do."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from api.main import create_app
from cli.main import main
from contracts import TaskChunkType
from core.security import Caller, Role, digest_of, keys_in_clear, parse_api_keys
from core.settings import ApiSettings, Settings

from ..support import asked, collect_events, serve
from .test_sessions import DELETE_CANCELLED, is_type, new_key

KEYS = "k-view:vera:viewer,k-op:otto:operator,k-ok:ann:approver"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_roles_gate_routes_and_keys_name_the_principal(
    client: Client, settings: Settings, worker: None
) -> None:
    app = create_app(
        settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})}), client=client
    )
    async with serve(app) as http:
        key = new_key()
        anonymous = await http.post(f"/sessions/{key}/messages", json={"content": "hi"})
        assert anonymous.status_code == 401
        wrong = await http.post(f"/sessions/{key}/messages", json={"content": "hi"}, headers=bearer("nope"))
        assert wrong.status_code == 401
        viewer = await http.post(
            f"/sessions/{key}/messages", json={"content": "hi"}, headers=bearer("k-view")
        )
        assert viewer.status_code == 403 and "vera has role viewer" in viewer.json()["detail"]

        sent = await http.post(
            f"/sessions/{key}/messages",
            json={"content": DELETE_CANCELLED, "principal": "someone-else"},
            headers=bearer("k-op"),
        )
        assert sent.status_code == 202
        chunks = await collect_events(
            http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), headers=bearer("k-view")
        )
        interaction_id = asked(chunks[-1]).interaction_id
        status = (await http.get(f"/sessions/{key}", headers=bearer("k-view"))).json()
        assert status["messages"][0]["name"] == "otto"
        assert status["pending_interactions"][0]["requested_by"] == "otto"

        path = f"/sessions/{key}/interactions/{interaction_id}"
        by_operator = await http.post(path, json={"approved": True}, headers=bearer("k-op"))
        assert by_operator.status_code == 403
        by_approver = await http.post(
            path, json={"approved": True, "principal": "mallory"}, headers=bearer("k-ok")
        )
        assert by_approver.status_code == 200
        assert by_approver.json()["decided_by"] == "ann"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("k1:alice", "entry 1 is not `sha256:<hex>:principal:role` or `key:principal:role`"),
        ("k1:alice:root", "role 'root'"),
        ("k0:x:viewer,sha256:abc:alice:admin", "entry 2: the sha256 digest is not 64 hex digits"),
        (":alice:admin", "entry 1 has an empty key or principal"),
        ("k1:alice:viewer:projects=", "entry 1: project name\\(s\\) '' in `projects=`"),
        ("k1:alice:viewer:project=shop", "entry 1: its last part 'project'= is not `projects="),
        ("k1:alice:viewer:projects=it's", 'project name\\(s\\) "it\'s" in `projects=`'),
        ("k1:alice:viewer,shop", "entry 2 is not `sha256:<hex>:principal:role`"),
    ],
)
def test_malformed_key_lists_are_refused_with_the_entry_named(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_api_keys(spec)


async def test_a_key_made_by_synapse_keys_new_works_from_its_digest_alone(
    client: Client, settings: Settings, worker: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "new", "carol", "viewer"]) == 0
    printed = capsys.readouterr().out.splitlines()
    key = printed[0].rsplit(": ", 1)[1]
    entry = printed[1].rsplit(": ", 1)[1]
    assert entry.startswith("sha256:") and entry.endswith(":carol:viewer") and key not in entry
    keyed = settings.model_copy(update={"api": ApiSettings(keys=entry)})
    async with serve(create_app(keyed, client=client)) as http:
        me = await http.get("/me", headers=bearer(key))
        assert me.status_code == 200 and me.json()["principal"] == "carol"
        assert (await http.get("/me", headers=bearer(entry.split(":")[1]))).status_code == 401, (
            "the digest is no key"
        )


def test_keys_in_clear_still_work_but_are_counted() -> None:
    keys = parse_api_keys(f"k1:alice:admin,sha256:{digest_of('k2')}:bob:viewer")
    assert keys.in_clear == 1
    assert keys.caller("k1") == Caller("alice", Role.admin) and keys.caller("k2") == Caller(
        "bob", Role.viewer
    )
    assert keys.caller("sha256") is None


@pytest.mark.parametrize(
    ("spec", "projects"),
    [
        ("k1:alice:viewer:projects=shop,billing,k2:bob:admin", {"k1": {"shop", "billing"}, "k2": None}),
        ("k1:alice:viewer:projects=shop+billing, k2:bob:admin", {"k1": {"shop", "billing"}, "k2": None}),
        (f"sha256:{digest_of('k1')}:alice:viewer:projects=shop", {"k1": {"shop"}}),
        ("k1:alice:viewer", {"k1": None}),
    ],
)
def test_an_entry_may_scope_its_key_to_projects(spec: str, projects: dict[str, set[str] | None]) -> None:
    keys = parse_api_keys(spec)
    for key, expected in projects.items():
        found = keys.caller(key)
        assert found is not None and found.projects == (frozenset(expected) if expected is not None else None)
    assert keys_in_clear(spec) == [key for key in projects if not spec.startswith("sha256")]


def test_keys_new_scopes_a_key_to_the_projects_given(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "new", "sam", "approver", "--projects", "shop,billing"]) == 0
    key, entry = (line.rsplit(": ", 1)[1] for line in capsys.readouterr().out.splitlines())
    assert entry.endswith(":sam:approver:projects=billing+shop")
    assert parse_api_keys(entry).caller(key) == Caller("sam", Role.approver, frozenset({"shop", "billing"}))
    assert main(["keys", "new", "sam", "approver", "--projects", "a b"]) == 2
    assert "project(s) 'a b'" in capsys.readouterr().err


def test_keys_new_refuses_a_principal_it_cannot_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "new", "a:b", "viewer"]) == 2
    assert "without `:` or `,`" in capsys.readouterr().err


ROLE_KEYS = {Role.viewer: "k-view", Role.operator: "k-op", Role.approver: "k-ok"}


async def test_every_operation_documents_the_role_it_enforces(client: Client, settings: Settings) -> None:
    """The OpenAPI document names each operation's role (its security scheme, `x-synapse-role`, a
    line of its description); a key one role short gets 403 naming it, a key of that role gets in."""
    app = create_app(
        settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})}), client=client
    )
    async with serve(app) as http:
        document = (await http.get("/openapi.json")).json()
        operations = [
            (method, path.replace("{", "").replace("}", ""), operation)
            for path, item in document["paths"].items()
            for method, operation in item.items()
        ]
        open_ones = sorted(path for _m, path, operation in operations if "x-synapse-role" not in operation)
        assert open_ones == ["/healthz", "/readyz"], "only the probes need no key"
        for method, path, operation in operations:
            if path in open_ones:
                continue
            role = Role[operation["x-synapse-role"]]
            assert operation["security"] == [{role.name: []}]
            assert f"role `{role.name}` or higher" in operation["description"]
            if role > Role.viewer:
                short = await http.request(method, path, headers=bearer(ROLE_KEYS[list(Role)[role.rank - 1]]))
                assert short.status_code == 403, (method, path, short.text)
                assert f"needs {role.name} or higher" in short.json()["detail"]
            else:
                assert (await http.request(method, path)).status_code == 401, (method, path)
            if role in ROLE_KEYS and not path.endswith("/events"):
                enough = await http.request(method, path, headers=bearer(ROLE_KEYS[role]))
                assert enough.status_code not in (401, 403), (method, path, enough.text)
