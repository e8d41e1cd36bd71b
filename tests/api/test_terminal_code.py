"""Grants and rules never carry code, end to end: a `session_prefix` grant given for `git status`
allows `git status --short` but asks for ``git -c core.fsmonitor=… status``, naming why; an allow
rule on `git` does not allow it either, a deny rule on `git` still denies it, and "allow always"
offers no rule for it. Real worker, real Temporal, real git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from contracts import SandboxProfile
from core.settings import Settings

from ..support import terminal_settings
from .test_sessions import decide, new_key
from .test_terminal import ask

FSMONITOR = "git -c core.fsmonitor='touch fsmonitor-ran' status"
CODE = (
    "git -c sets configuration that can run programs (core.fsmonitor, core.pager, alias.*): it can run "
    "other code, so it asks every time (a grant or allow rule on its program does not cover it)"
)


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """The terminal starts in a git repository of its own; approved commands run without a sandbox
    (`full`), so what the probe would run is not held back by one: only the approval stops it; git
    is not on this deployment's allowlist, so every git command asks (or runs by a grant or rule)."""
    made = terminal_settings(tmp_path, task_queue, terminal_sandbox=SandboxProfile.FULL, terminal_allow="ls")
    subprocess.run(["git", "init", "-q", str(tmp_path / "work")], check=True)
    (tmp_path / "work" / "notes.txt").write_text("not yet added\n")
    return made


async def pending(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    [request] = (await http.get(f"/sessions/{key}")).json()["pending_interactions"]
    return dict(request)


async def run(http: httpx.AsyncClient, key: str, command: str) -> dict[str, Any]:
    """Send `!command` and wait for the turn to end (nobody is asked)."""
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": f"!{command}", "principal": "alice"}
    )
    assert sent.status_code == 200 and sent.json()["status"] == "completed", sent.text
    return dict(sent.json())


async def last_audit(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    return dict((await http.get(f"/sessions/{key}/audit")).json()["entries"][-1])


async def test_a_grant_for_git_status_allows_its_options_but_asks_for_git_with_configuration(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    key = new_key()
    first, _ = await ask(http, key, "git status")
    request = await pending(http, key)
    assert (request["content"]["head"], request["content"]["grants"]) == (
        "git status",
        ["session", "session_prefix"],
    )
    granted = await decide(
        http, key, first, approved=True, principal="bob", response_data={"grant": "session_prefix"}
    )
    assert granted.status_code == 200 and granted.json()["tool_result"]["ok"], granted.text
    [grant] = (await http.get(f"/sessions/{key}/grants")).json()["grants"]
    assert (grant["head"], grant["scope"]) == ("git status", "session_prefix")

    probe, _ = await ask(http, key, FSMONITOR)
    request = await pending(http, key)
    assert request["interaction_id"] == probe, "asked for: the grant does not cover it"
    assert request["content"]["reason"] == CODE
    assert (request["content"]["head"], request["content"]["grants"]) == (None, ["session"])
    widened = await decide(
        http, key, probe, approved=True, principal="bob", response_data={"grant": "session_prefix"}
    )
    assert widened.status_code == 422 and "possible: session" in widened.json()["detail"], widened.text
    assert (await decide(http, key, probe, approved=False, principal="bob")).status_code == 200
    assert not (tmp_path / "work" / "fsmonitor-ran").exists()

    ran = await run(http, key, "git status --short")
    assert ran["answer"] == "exit status 0:\n?? notes.txt\n", ran
    allowed = await last_audit(http, key)
    assert (allowed["kind"], allowed["comment"]) == (
        "allowed",
        "allowed by grant grant_1 of bob: terminal: git status --short",
    )
    assert (await http.get(f"/sessions/{key}/grants")).json()["grants"][0]["uses"] == 1
    other, _ = await ask(http, key, "git log -3")
    assert (await pending(http, key))["interaction_id"] == other, "`git log` is not `git status`"


async def test_an_allow_rule_on_git_leaves_git_with_configuration_asked_and_a_deny_rule_denies_it(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    rule = {"tool": "terminal", "match": {"command_prefix": "git"}, "scope": "global", "created_by": "ada"}
    allow = await http.post("/rules", json={**rule, "decision": "allow"})
    assert allow.status_code == 201, allow.text
    key = new_key()
    await run(http, key, "git status")
    assert (await last_audit(http, key))["kind"] == "rule_allowed"

    probe, _ = await ask(http, key, FSMONITOR)
    request = await pending(http, key)
    assert request["interaction_id"] == probe and request["content"]["reason"] == CODE
    assert "rule" not in request["content"], "no rule decides it: a person does"
    assert (await decide(http, key, probe, approved=False, principal="bob")).status_code == 200

    deny = await http.post("/rules", json={**rule, "decision": "deny", "reason": "no git here"})
    assert deny.status_code == 201, deny.text
    await run(http, key, FSMONITOR)
    denied = await last_audit(http, key)
    assert (denied["kind"], denied["principal"]) == ("rule_denied", f"rule:{deny.json()['rule_id']}")
    assert not (tmp_path / "work" / "fsmonitor-ran").exists()

    offered = await http.post("/rule-offers", json={"tool": "terminal", "arguments": {"command": FSMONITOR}})
    assert offered.status_code == 422, offered.text
    assert offered.json()["detail"] == (
        "arguments: `git -c 'core.fsmonitor=touch fsmonitor-ran' status` can run other code (git -c sets configuration "
        "that can run programs (core.fsmonitor, core.pager, alias.*)): it asks every time, and no "
        "allow-always rule is offered for it; approve it once"
    )
