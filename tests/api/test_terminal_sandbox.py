"""Sandboxes over HTTP: what an approval request says a command may reach, the profile chosen by the
session, its agent or the approver, a grant that keeps it, and a free command in its read-only sandbox.

Every test runs commands in real bubblewrap sandboxes (skipped, with the reason, where there is none).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import CommandEnded, ToolCalled, ToolUsed
from core.settings import Settings, TemporalSettings, ToolSettings

from ..activities.tools.terminal.sandboxing import needs_bwrap
from ..support import collect_events, event_of, events, serve_agents
from .test_sessions import decide, new_key
from .test_terminal import ask, turn_over

pytestmark = needs_bwrap

PROFILES = ["workspace-write", "read-only", "full"]


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """The terminal starts in (and trusts, and may write) `work`; `outside` is beside it."""
    for folder in ("work", "outside", "data"):
        (tmp_path / folder).mkdir()
    return Settings(
        data_dir=tmp_path / "data",
        temporal=TemporalSettings(task_queue=task_queue),
        tools=ToolSettings(terminal_cwd=tmp_path / "work"),
        _env_file=None,
    )


async def pending(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    """The session's pending request."""
    session = (await http.get(f"/sessions/{key}")).json()
    [request] = session["pending_interactions"]
    return dict(request)


async def test_the_request_shows_the_sandbox_and_the_approver_may_choose_another(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    command = "touch made.txt; touch ../outside/escaped.txt"
    key = new_key()
    first, _ = await ask(http, key, command)
    request = await pending(http, key)
    assert request["content"]["context"] == {"cwd": str(work), "sandbox": "workspace-write"}
    assert request["content"]["sandboxes"] == PROFILES
    result = (await decide(http, key, first, approved=True, principal="bob")).json()["tool_result"]
    assert (work / "made.txt").exists() and not (outside / "escaped.txt").exists()
    assert result["ok"] is False and result["metadata"]["sandbox"] == "workspace-write"

    second, offset = await ask(http, key, command)
    chosen = await decide(
        http, key, second, approved=True, principal="bob", response_data={"sandbox": "full"}
    )
    result = chosen.json()["tool_result"]
    assert result["ok"] and (outside / "escaped.txt").exists(), "the approver chose no sandbox"
    assert result["metadata"]["sandbox"] == "full"
    chunks = await collect_events(http, key, turn_over, params={"after": offset})
    [started] = events(chunks, ToolCalled)
    assert started.context.sandbox == "full", "the stream says where it ran"
    [complete] = [e for e in events(chunks, CommandEnded) if e.source_tool == "terminal"]
    assert complete.sandbox == "full"
    audit = (await http.get(f"/sessions/{key}/audit")).json()
    assert [(e["kind"], e["interaction_id"]) for e in audit["entries"] if e["kind"] == "approved"] == [
        ("approved", first),
        ("approved", second),
    ]


async def test_a_sessions_choice_is_its_default_and_a_bad_choice_is_refused_naming_it(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    refused = await http.post("/sessions", json={"session_key": new_key(), "sandbox": "none"})
    assert refused.status_code == 422 and "sandbox" in refused.text
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "sandbox": "read-only"})
    assert created.status_code == 201, created.text
    interaction_id, _ = await ask(http, key, "touch made.txt")
    assert (await pending(http, key))["content"]["context"]["sandbox"] == "read-only"
    bad = await decide(
        http, key, interaction_id, approved=True, principal="bob", response_data={"sandbox": "root"}
    )
    assert bad.status_code == 422
    assert bad.json()["detail"] == (
        "body.response_data.sandbox: 'root' is not a sandbox; expected one of workspace-write, read-only, full"
    )
    result = (await decide(http, key, interaction_id, approved=True, principal="bob")).json()["tool_result"]
    assert result["ok"] is False and "Read-only file system" in result["content"]["output"]
    assert not (tmp_path / "work" / "made.txt").exists()


async def test_cd_comes_back_out_of_the_sandbox_and_exports_stay_in_sandboxes(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    key = new_key()
    first, _ = await ask(http, key, "mkdir sub && cd sub && export GREETING=hi PROMPT_COMMAND='touch pwned'")
    assert (await decide(http, key, first, approved=True, principal="bob")).json()["tool_result"]["ok"]
    second, _ = await ask(http, key, "echo $GREETING from $(basename $PWD)")
    assert (await pending(http, key))["content"]["context"]["cwd"] == str(tmp_path / "work" / "sub")
    result = (await decide(http, key, second, approved=True, principal="bob")).json()["tool_result"]
    assert result["content"]["output"] == "hi from sub\n", "a later sandboxed command starts with the exports"
    third, _ = await ask(http, key, "echo ${GREETING:-unset} ${PROMPT_COMMAND:-unset}")
    full = await decide(http, key, third, approved=True, principal="bob", response_data={"sandbox": "full"})
    assert full.json()["tool_result"]["content"]["output"] == "unset unset\n", (
        "the terminal's own shell: none"
    )
    assert not list((tmp_path / "work").rglob("pwned"))


AGENT_CLI = Path(__file__).parents[1] / "fakes" / "agent_cli.py"


async def test_a_grant_for_sandboxed_calls_never_types_into_a_program(http: httpx.AsyncClient) -> None:
    """Input for a program at its prompt runs in that program, without a sandbox: a grant made for
    sandboxed calls does not allow it, and its request says where it goes."""
    key = new_key()
    first, _ = await ask(http, key, "printf granted")
    granted = await decide(
        http, key, first, approved=True, principal="bob", response_data={"grant": "session_prefix"}
    )
    assert granted.status_code == 200 and granted.json()["tool_result"]["ok"]
    started, _ = await ask(http, key, f"{sys.executable} {AGENT_CLI}")
    run = await decide(http, key, started, approved=True, principal="bob", response_data={"sandbox": "full"})
    assert run.json()["tool_result"]["content"]["waiting_for_input"] == ">"
    typed, _ = await ask(http, key, "printf typed-into-the-program")
    request = await pending(http, key)
    assert request["interaction_id"] == typed, "asked for, not allowed by the grant"
    context = request["ask"]["context"]
    assert context["sandbox"] == "full"
    assert context["sandbox_note"].startswith("typed into the program waiting at its prompt")
    assert "sandboxes" not in request["content"], "no sandbox to choose for it"
    refused = await decide(
        http, key, typed, approved=True, principal="bob", response_data={"sandbox": "read-only"}
    )
    assert refused.status_code == 422 and "not possible" in refused.json()["detail"]


async def test_a_call_two_people_approve_runs_as_proposed(http: httpx.AsyncClient, tmp_path: Path) -> None:
    key = new_key()
    policies = {"terminal": {"approvals_required": 2}}
    created = await http.post("/sessions", json={"session_key": key, "policies": policies})
    assert created.status_code == 201, created.text
    interaction_id, _ = await ask(http, key, "touch ../outside/two.txt")
    for principal, data in (("bob", {"sandbox": "read-only"}), ("carol", {"sandbox": "full"})):
        refused = await decide(
            http, key, interaction_id, approved=True, principal=principal, response_data=data
        )
        assert refused.status_code == 422, refused.text
        assert "needs 2 approvers, who approve the same call: it runs as proposed" in refused.json()["detail"]
    assert (await decide(http, key, interaction_id, approved=True, principal="bob")).status_code == 202
    done = await decide(http, key, interaction_id, approved=True, principal="carol")
    assert done.status_code == 200 and done.json()["tool_result"]["metadata"]["sandbox"] == "workspace-write"
    assert not (tmp_path / "outside" / "two.txt").exists()


async def test_a_grant_keeps_the_sandbox_it_was_given_with(http: httpx.AsyncClient, tmp_path: Path) -> None:
    key = new_key()
    first, _ = await ask(http, key, "touch ../outside/a.txt")
    granted = await decide(
        http,
        key,
        first,
        approved=True,
        principal="bob",
        response_data={"grant": "session_prefix", "sandbox": "full"},
    )
    assert granted.status_code == 200 and (tmp_path / "outside" / "a.txt").exists()
    grants = (await http.get(f"/sessions/{key}/grants")).json()["grants"]
    assert [(g["head"], g["sandbox"]) for g in grants] == [("touch", "full")]
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true",
        json={"content": "!touch ../outside/b.txt", "principal": "alice"},
    )
    assert sent.status_code == 200 and sent.json()["status"] == "completed", sent.text
    assert (tmp_path / "outside" / "b.txt").exists(), "allowed by the grant, in its sandbox"


async def test_a_free_command_says_it_ran_in_the_read_only_sandbox(http: httpx.AsyncClient) -> None:
    key = new_key()
    first, _ = await ask(http, key, "mkdir -p sub")  # an approved one first: each says its own sandbox
    assert (await decide(http, key, first, approved=True, principal="bob")).json()["tool_result"]["ok"]
    sent = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "!ls -a"})
    assert sent.status_code == 200 and sent.json()["status"] == "completed", sent.text
    chunks = await collect_events(
        http, key, lambda c: isinstance(c.content, ToolUsed) and "ls -a" in c.content.result.model_dump_json()
    )
    request = events(chunks, ToolCalled)[-1]
    assert request.tool_params == {"command": "ls -a"}
    assert request.requires_approval is False
    assert request.context.sandbox == "trusted-read-only"
    assert event_of(chunks[-1], ToolUsed).result.metadata["sandbox"] == "trusted-read-only"


@pytest.fixture
async def agent_http(client: Client, settings: Settings, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """API and worker with a declared demo agent whose approved commands run read-only."""
    careful = '[agents.careful]\nframework = "demo"\ntools = ["terminal"]\nsandbox = "read-only"\n'
    async with serve_agents(client, settings, careful, tmp_path) as http:
        yield http


async def test_an_agents_choice_applies_unless_the_session_chooses(agent_http: httpx.AsyncClient) -> None:
    for body, expected in (({}, "read-only"), ({"sandbox": "full"}, "full")):
        key = new_key()
        created = await agent_http.post(
            "/sessions", json={"session_key": key, "agent_id": "Agent:careful", **body}
        )
        assert created.status_code == 201, created.text
        await ask(agent_http, key, "touch made.txt")
        assert (await pending(agent_http, key))["content"]["context"]["sandbox"] == expected


async def test_a_prefix_grant_covers_a_program_not_a_line_that_starts_with_it(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    key = new_key()
    first, _ = await ask(http, key, "printf granted")
    granted = await decide(
        http, key, first, approved=True, principal="bob", response_data={"grant": "session_prefix"}
    )
    assert granted.status_code == 200
    chained, _ = await ask(http, key, "printf granted; touch ../outside/by-grant")
    request = await pending(http, key)
    assert request["interaction_id"] == chained, "asked for: more than `printf`"
    assert request["content"]["grants"] == ["session"], "no prefix to grant for a line with shell syntax"
    assert not (tmp_path / "outside" / "by-grant").exists()


async def test_the_request_shows_where_the_terminal_is_after_old_messages_are_let_go(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    key = new_key()
    first, _ = await ask(http, key, "mkdir -p deep && cd deep")
    assert (await decide(http, key, first, approved=True, principal="bob")).json()["tool_result"]["ok"]
    for _ in range(6):  # 360 KB of conversation: the oldest messages, the result among them, go
        sent = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "x" * 60_000})
        assert sent.status_code == 200, sent.text
    await ask(http, key, "touch where-am-i")
    assert (await pending(http, key))["content"]["context"]["cwd"] == str(tmp_path / "work" / "deep")
