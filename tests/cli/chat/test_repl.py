"""The real `synapse chat`, driven in tmux against a real API and worker (issue 22): approvals
inline (y, n, s, a with an edited prefix, e editing a DELETE), a decision over HTTP while the
prompt is open, a saved chat resumed after SIGKILL, `@file` inside and outside trusted folders, a
bad slash command, and Ctrl-C during a long command."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from ...conftest import assert_eventually
from ...gateway import Gateway
from .tmux import TMUX, Tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (Debian: apt-get install tmux)")
KEYS_LINE = "[l] later ›"
FOOTER = " · Agent:demo · "


def user_settings(tmux: Tmux, text: str) -> Path:
    """Write the REPL user's `~/.synapse/settings.toml`."""
    settings = tmux.home / ".synapse" / "settings.toml"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(text)
    return settings


async def first_message(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    """The session's first message, once it has one (as the API lists it)."""
    said = await assert_eventually(
        lambda: http.get(f"/sessions/{key}/messages"),
        lambda r: r.status_code == 200 and r.json()["total"] > 0,
        what=f"the first message of {key}",
    )
    message: dict[str, Any] = said.json()["messages"][0]
    return message


async def footer(tmux: Tmux) -> str:
    """The REPL's footer line (shown whenever a prompt is open)."""
    screen = await tmux.wait_for(FOOTER)
    return [line for line in screen.splitlines() if FOOTER in line][-1].strip()


async def session_key(tmux: Tmux) -> str:
    """The session the REPL follows."""
    return next(word for word in (await footer(tmux)).split() if word.startswith("chat-"))


async def test_an_approved_call_runs_and_a_denied_one_does_not(
    repl: Tmux, count_orders: Callable[[str], int]
) -> None:
    await repl.start()
    await repl.type("DELETE FROM orders WHERE id = 1")
    await repl.wait_for("? tool_1 · sql wants approval")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    await repl.wait_for("DELETE done: 1 row affected.")
    assert "✓ tool_1 approved by alice (http)" in await repl.screen()
    assert count_orders("id = 1") == 0

    await repl.type("DELETE FROM orders WHERE id = 2")
    await repl.wait_for("? tool_2 · sql wants approval")
    await repl.wait_for(KEYS_LINE, count=2)
    await repl.keys("n")
    await repl.wait_for("reason for the agent")
    await repl.type("not today")
    screen = await repl.wait_for("✗ tool_2 denied by alice (http): not today")
    await repl.wait_for('I did not run sql: denied by alice (a person denied it) — "not today".')
    assert count_orders("id = 2") == 1
    assert "tool_3" not in screen


async def test_allow_for_the_session_lets_the_next_matching_call_run(
    repl: Tmux, count_orders: Callable[[str], int]
) -> None:
    await repl.start()
    await repl.type("DELETE FROM orders WHERE id = 3")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("s")
    await repl.wait_for("granted: sql DELETE orders")
    await repl.wait_for("DELETE done: 1 row affected.")
    await repl.type("DELETE FROM orders WHERE id = 5")
    screen = await repl.wait_for("DELETE done: 1 row affected.", count=2)
    assert "✓ tool_2 allowed by grant grant_1 of alice" in screen
    assert "tool_2 · sql wants approval" not in screen
    assert count_orders("id IN (3, 5)") == 0


async def test_allow_always_with_an_edited_prefix_holds_in_a_new_session(
    repl: Tmux, http: httpx.AsyncClient, project: Path
) -> None:
    await repl.start()
    await repl.type("!printf hello")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("a")
    await repl.wait_for(
        f"Allow terminal calls with this command prefix in project {project}, without asking."
    )
    await repl.wait_for("command prefix (edit, then Enter) › printf hello")
    await repl.type("printf")  # the prefix comes selected: typing replaces it
    await repl.wait_for(f'allow terminal "printf" in project {project}')
    await repl.wait_for("exit status 0:")

    await repl.type("/agent Agent:demo")  # the next message starts a new session
    await repl.wait_for("your next message starts session")
    await repl.type("!printf bye")
    screen = await repl.wait_for("✓ tool_1 allowed by rule:rule_")
    assert screen.count("tool_1 · terminal wants approval") == 1  # the first session's, not this one's
    await repl.wait_for("exit status 0:", count=2)
    await repl.type("!touch never.txt")
    await repl.wait_for("? tool_2 · terminal wants approval")

    rules = (await http.get("/rules", params={"project": str(project)})).json()
    assert [(r["match"]["command_prefix"], r["scope"], r["project"], r["created_by"]) for r in rules] == [
        ("printf", "project", str(project), "alice")
    ], "the project's rule, never a global one, made by the REPL's person"


async def test_edit_narrows_a_delete_before_it_runs(repl: Tmux, count_orders: Callable[[str], int]) -> None:
    await repl.start()
    await repl.type("DELETE FROM orders WHERE status = 'cancelled'")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("e")
    await repl.wait_for("sql › DELETE FROM orders WHERE status = 'cancelled'")
    await repl.type("DELETE FROM orders WHERE id = 4")  # the pre-filled text is selected: typing replaces it
    await repl.wait_for("→ sql: DELETE FROM orders WHERE id = 4")
    await repl.wait_for("DELETE done: 1 row affected.")
    assert count_orders("id = 4") == 0
    assert count_orders("status = 'cancelled'") == 2


async def test_a_decision_over_http_closes_the_open_prompt(repl: Tmux, http: httpx.AsyncClient) -> None:
    await repl.start()
    await repl.type("UPDATE orders SET amount = 1 WHERE id = 7")
    await repl.wait_for(KEYS_LINE)
    key = await session_key(repl)
    decided = await http.post(
        f"/sessions/{key}/interactions/tool_1", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code == 200, decided.text
    await repl.wait_for("(the prompt for tool_1 closed: bob (http) decided it)")
    await repl.wait_for("UPDATE done: 1 row affected.")
    await repl.type("/pending")  # the input line is back
    await repl.wait_for("nothing waits for a person")


async def test_a_saved_chat_resumes_in_a_new_repl_after_sigkill(
    repl: Tmux, count_orders: Callable[[str], int]
) -> None:
    await repl.start()
    await repl.type("DELETE FROM orders WHERE id = 6")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("l")
    await repl.wait_for("tool_1 left pending")
    await repl.type("/chat save nightly")
    await repl.wait_for("saved as nightly")
    key = await session_key(repl)
    os.kill(await repl.pid(), signal.SIGKILL)

    await repl.start()  # a new process, in a new window
    assert await session_key(repl) != key
    await repl.keys("Up")  # the history file kept what was typed
    await repl.wait_for("› /chat save nightly")
    await repl.keys("C-u")
    await repl.type("/chat resume nightly")
    await repl.wait_for(f"attached to session {key}")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    await repl.wait_for("DELETE done: 1 row affected.")
    assert count_orders("id = 6") == 0


async def test_at_file_reads_only_trusted_folders(repl: Tmux, http: httpx.AsyncClient, project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "notes.txt").write_text("the notes say 42\n")
    (project / "other").mkdir()
    (project / "other" / "plan.txt").write_text("the plan\n")
    settings = user_settings(repl, f'# mine\ntrusted_folders = ["{project / "docs"}"]\nvi_mode = false\n')
    await repl.start()

    await repl.type("read @docs/notes.txt please")
    await repl.wait_for("attached docs/notes.txt (17 bytes)")
    key = await session_key(repl)
    first = (await first_message(http, key))["content"]
    assert (
        first
        == "read @docs/notes.txt please\n\n--- @docs/notes.txt (17 bytes) ---\nthe notes say 42\n--- end of @docs/notes.txt ---"
    )

    await repl.type("read @other/plan.txt")
    await repl.wait_for(f"Trust {project} (its files can then be attached)? [y/n] ›")
    await repl.keys("n")
    await repl.wait_for("@other/plan.txt is outside your trusted folders; nothing was sent")
    said = (await http.get(f"/sessions/{key}/messages")).json()["messages"]
    assert [m["content"] for m in said if m["role"] == "user"] == [first]
    await repl.type("read @other/plan.txt")
    await repl.wait_for(f"Trust {project} (its files can then be attached)? [y/n] ›", count=2)
    await repl.keys("y")
    await repl.wait_for("attached other/plan.txt (9 bytes)")
    await assert_eventually(
        lambda: http.get(f"/sessions/{key}/messages"),
        lambda r: any(
            str(m["content"]).endswith(
                "--- @other/plan.txt (9 bytes) ---\nthe plan\n--- end of @other/plan.txt ---"
            )
            for m in r.json()["messages"]
        ),
        what="the trusted file sent",
    )
    assert settings.read_text().startswith("# mine\n")
    assert f'"{project}"' in settings.read_text()


async def test_ctrl_l_clears_the_screen_and_the_repl_goes_on(repl: Tmux) -> None:
    await repl.start()
    await repl.type("/staus")
    await repl.wait_for("error: unknown command /staus")
    await repl.keys("C-l")
    await assert_eventually(repl.visible, lambda shown: "/staus" not in shown, what="the screen cleared")
    await repl.type("/agent")
    await repl.wait_for("agent: Agent:demo")


async def test_a_bad_slash_command_names_the_closest(repl: Tmux) -> None:
    await repl.start()
    await repl.type("/staus")
    await repl.wait_for("error: unknown command /staus: did you mean /status")
    await repl.type("/chat sav nightly /agent")
    await repl.wait_for("error: unknown /chat command 'sav': did you mean /chat save?")
    await repl.wait_for("not run: /agent")
    await repl.type("/agent /settings")  # two commands on one line
    await repl.wait_for("agent: Agent:demo")
    await repl.wait_for("profile                     default                    default")


async def test_ctrl_c_during_a_long_command_cancels_the_turn(repl: Tmux, http: httpx.AsyncClient) -> None:
    await repl.start()
    await repl.type("!for i in $(seq 30); do echo tick $i; sleep 1; done")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    await repl.wait_for("→ terminal: for i in $(seq 30)")
    await repl.wait_for("tick 2")  # its output, live, while it runs
    await repl.keys("C-c")
    await repl.wait_for("Cancel the running turn? [y/n] ›")
    await repl.keys("y")
    screen = await repl.wait_for("✗ turn cancelled by alice: cancelled in synapse chat (Ctrl-C)", within=15)
    assert "tick 30" not in screen and "exit status 0" not in screen
    assert "running terminal" not in await footer(repl)
    key = await session_key(repl)
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["principal"] for e in audit if e["kind"] == "turn_cancelled"] == ["alice"]


GATED_PLAN = {
    "new_tasks": [
        {
            "task_id": task,
            "assignee_id": "Agent:demo",
            "input_data": {"echo": task},
            "directives": {"human_interaction": {"prompt": f"Run {task}?"}},
        }
        for task in ("first", "second")
    ],
    "new_edges": [{"source_task_id": "first", "target_task_id": "second"}],
}


async def test_a_graph_gate_is_asked_inline_and_closed_when_decided_over_http(
    repl: Tmux, http: httpx.AsyncClient
) -> None:
    await repl.start()
    await repl.type("plan: " + json.dumps(GATED_PLAN))
    await repl.wait_for("? gate_1 · graph task first waits: Run first?")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    await repl.wait_for("◆ graph task first: ready (confirmed by alice)")

    screen = await repl.wait_for("? gate_2 · graph task second waits: Run second?")
    await repl.wait_for(KEYS_LINE, count=2)
    graph = next(line for line in screen.splitlines() if "◆ task graph " in line).split()[3].rstrip(":")
    decided = await http.post(
        f"/graphs/{graph}/interactions/gate_2", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code == 200, decided.text
    await repl.wait_for("(the prompt for gate_2 closed: bob decided it)")
    await repl.wait_for("◆ graph task second: ready (confirmed by bob)")
    await repl.wait_for('"status": "completed"')
    assert (await footer(repl)).endswith("· 0 pending · profile default")
    await repl.type("/pending")
    await repl.wait_for("nothing waits for a person")


async def test_tab_completes_a_session_key_the_repl_has_not_listed(
    repl: Tmux, http: httpx.AsyncClient
) -> None:
    created = await http.post("/sessions", json={"session_key": "elsewhere-7f3a"})
    assert created.status_code == 201, created.text
    await assert_eventually(
        lambda: http.get("/sessions"),
        lambda r: "elsewhere-7f3a" in r.text,
        what="the session listed",
    )
    await repl.start()
    await repl.type("/attach elsewhere-", enter=False)
    await repl.keys("Tab")
    await repl.wait_for("› /attach elsewhere-7f3a")
    await repl.keys("Enter")
    await repl.wait_for("attached to session elsewhere-7f3a")
    assert (await footer(repl)).startswith("elsewhere-7f3a · Agent:demo · ")


async def test_chat_share_writes_the_session_log(repl: Tmux, project: Path) -> None:
    (project / "notes.txt").write_text("delete order 8\n")
    user_settings(repl, f'trusted_folders = ["{project}"]\n')
    await repl.start()
    await repl.type("see @notes.txt")
    await repl.wait_for("I did not understand")
    await repl.type("DELETE FROM orders WHERE id = 8")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("n")
    await repl.wait_for("reason for the agent")
    await repl.type("not this one")
    await repl.wait_for("I did not run sql")
    await repl.type("SELECT id FROM orders WHERE id = 8")
    await repl.wait_for("SELECT returned 1 row")
    await repl.type("UPDATE orders SET amount = 2 WHERE id = 8")
    await repl.wait_for(KEYS_LINE, count=2)
    await repl.keys("e")
    await repl.wait_for("sql › UPDATE orders SET amount = 2 WHERE id = 8")
    await repl.type("UPDATE orders SET amount = 3 WHERE id = 8")
    await repl.wait_for("UPDATE done: 1 row affected.")
    await repl.type("/chat save shared /chat share out/log.json /chat share out/log.md")
    await repl.wait_for("wrote " + str(project / "out/log.md"))
    key = await session_key(repl)

    log = json.loads((project / "out/log.json").read_text())
    assert (log["version"], log["project_root"], log["session_key"], log["agent_id"]) == (
        1,
        str(project),
        key,
        "Agent:demo",
    )
    assert log["created_at"].endswith("Z")
    messages = log["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 4
    digest = "sha256:" + hashlib.sha256(b"delete order 8").hexdigest()
    assert messages[0]["attachments"] == [{"type": "file", "path": "notes.txt", "size": 15, "digest": digest}]
    assert messages[0]["author"] == "alice"
    assert messages[1]["tool_calls"] == []
    (denied,) = messages[3]["tool_calls"]
    assert (denied["name"], denied["arguments"], denied["status"]) == (
        "sql",
        {"sql": "DELETE FROM orders WHERE id = 8"},
        "denied",
    )
    (ran,) = messages[5]["tool_calls"]
    assert (ran["name"], ran["status"], ran["result"]["ok"]) == ("sql", "success", True)
    assert isinstance(ran["duration_ms"], int) and ran["duration_ms"] >= 0
    assert messages[5]["content"].startswith("SELECT returned 1 row")
    (edited,) = messages[7]["tool_calls"]
    assert (edited["arguments"], edited["proposed_arguments"]) == (
        {"sql": "UPDATE orders SET amount = 3 WHERE id = 8"},
        {"sql": "UPDATE orders SET amount = 2 WHERE id = 8"},
    ), "what ran, and what the agent had proposed"
    asked = {
        e["kind"]: datetime.fromisoformat(e["at"])
        for e in log["audit"]
        if e["interaction_id"] == edited["interaction_id"]
    }
    waited_ms = (asked["approved"] - asked["requested"]).total_seconds() * 1000
    assert 0 <= edited["duration_ms"] < waited_ms, "the run alone, not alice's time to edit it"
    decided = [
        (e["kind"], e["principal"], e.get("comment")) for e in log["audit"] if e["interaction_id"] == "tool_1"
    ]
    assert ("denied", "alice", "not this one") in decided, log["audit"]
    assert [c["tag"] for c in log["checkpoints"]] == ["shared"]

    markdown = (project / "out/log.md").read_text()
    assert markdown.startswith(f"# Synapse session `{key}`\n")
    assert "- attached file `notes.txt`" in markdown
    assert "- tool `sql`: denied" in markdown
    assert f"**alice** · {messages[2]['timestamp']}\n\nDELETE FROM orders WHERE id = 8\n" in markdown
    assert "| denied | alice | http | tool_1 | not this one |" in markdown
    assert '  {"sql": "UPDATE orders SET amount = 2 WHERE id = 8"}  (proposed)\n' in markdown


async def test_the_stream_resumes_after_the_connection_drops(repl: Tmux, http: httpx.AsyncClient) -> None:
    gateway = Gateway(http.base_url.port or 80)
    await gateway.restore()
    repl.api = gateway.url
    try:
        await repl.start()
        await repl.type("SELECT id FROM orders WHERE id = 1")
        await repl.wait_for("SELECT returned 1 row")
        await repl.wait_for(" · connected · ")
        key = await session_key(repl)

        await gateway.cut()
        await repl.wait_for(f" · API unreachable at {gateway.url} · ")
        sent = await http.post(
            f"/sessions/{key}/messages",
            json={"content": "SELECT id FROM orders WHERE id = 2", "principal": "bob"},
        )
        assert sent.status_code == 202, sent.text
        await assert_eventually(
            lambda: http.get(f"/sessions/{key}"),
            lambda r: (
                str(r.json()["messages"][-1]["content"]).startswith("SELECT returned 1 row")
                and any(m.get("name") == "bob" for m in r.json()["messages"])
            ),
            what="bob's turn to end",
        )
        assert "bob: SELECT" not in await repl.screen()

        await gateway.restore()
        screen = await repl.wait_for("SELECT returned 1 row", count=2, within=30)
        assert screen.count("bob: SELECT id FROM orders WHERE id = 2") == 1
        assert screen.count("→ sql: SELECT id FROM orders WHERE id = 1") == 1  # resumed, not replayed
        await repl.wait_for(" · connected · ")
    finally:
        await gateway.cut()


async def test_ctrl_d_at_a_request_quits_and_leaves_it_pending(repl: Tmux, http: httpx.AsyncClient) -> None:
    await repl.start()
    await repl.type("DELETE FROM orders WHERE id = 9")
    await repl.wait_for(KEYS_LINE)
    key = await session_key(repl)
    await repl.keys("C-d")
    screen = await repl.wait_for(f"bye: session {key} goes on")
    assert "Cancel the running turn?" not in screen
    assert "tool_1 left pending" in screen
    live = (await http.get(f"/sessions/{key}")).json()
    assert [i["interaction_id"] for i in live["pending_interactions"]] == ["tool_1"]


async def test_bang_alone_switches_shell_mode(repl: Tmux) -> None:
    await repl.start()
    await repl.type("!")
    await repl.wait_for("shell mode: each line is a command for the agent's terminal")
    assert (await footer(repl)).endswith("· profile default · shell mode")
    await repl.type("touch made-in-shell-mode.txt")
    await repl.wait_for("? tool_1 · terminal wants approval")
    await repl.wait_for("  touch made-in-shell-mode.txt")
    await repl.keys("n")
    await repl.wait_for("reason for the agent")
    await repl.keys("Enter")
    await repl.wait_for("✗ tool_1 denied by alice (http)")
    await repl.type("!")
    await repl.wait_for("shell mode off: lines go to the agent as messages")
    assert "shell mode" not in await footer(repl)


async def test_settings_reset_keeps_a_backup_and_the_defaults_apply(repl: Tmux) -> None:
    settings = user_settings(repl, 'profile = "restricted"\nvi_mode = true\n')
    await repl.start()
    assert (await footer(repl)).endswith("· profile restricted")
    await repl.type("/settings")
    await repl.wait_for("profile                     restricted                 ~/.synapse/settings.toml")
    await repl.type("/settings reset")
    await repl.wait_for("Reset ~/.synapse/settings.toml to the defaults (a backup is kept)? [y/n] ›")
    await repl.keys("y")
    await repl.wait_for("changed: vi_mode; that takes effect when synapse chat starts again")
    (backup,) = settings.parent.glob("settings.toml.bak-*")
    assert backup.read_text() == 'profile = "restricted"\nvi_mode = true\n' and not settings.exists()
    await repl.type("/settings")
    await repl.wait_for("profile                     default                    default")
    assert (await footer(repl)).endswith("· profile default")  # the session to come takes it


async def test_a_question_is_answered_inline(repl: Tmux) -> None:
    await repl.start()
    await repl.type("ask: which table?")
    await repl.wait_for("? input_1 asks: which table?")
    await repl.wait_for("answer (Enter: later) ›")
    await repl.type("orders")
    await repl.wait_for("✓ input_1 answered by alice (http): orders")
    await repl.wait_for('alice answered "which table?": orders')
    assert (await footer(repl)).endswith("· 0 pending · profile default")


async def test_a_large_file_goes_as_an_artifact_and_git_ignored_ones_stay(
    repl: Tmux, http: httpx.AsyncClient, project: Path
) -> None:
    (project / ".synapse" / "settings.toml").write_text("inline_limit_bytes = 100\n")
    (project / ".gitignore").write_text("*.log\n")
    (project / "data").mkdir()
    (project / "data" / "big.csv").write_text("id,amount\n" + "1,2.5\n" * 40)
    (project / "data" / "run.log").write_text("noise\n")
    (project / "data" / "small.txt").write_text("small\n")
    user_settings(repl, f'trusted_folders = ["{project}"]\n')
    await repl.start()
    await repl.type("look at @data")
    await repl.wait_for("skipped data/run.log: ignored by git")
    await repl.wait_for("data/big.csv (250 bytes, over inline_limit_bytes=100): sent as an artifact")
    await repl.wait_for("attached data/small.txt (6 bytes)")
    message = await first_message(http, await session_key(repl))
    (artifact,) = message["metadata"]["artifacts"]
    assert message["content"].splitlines()[:3] == [
        "look at @data",
        "",
        f"--- @data/big.csv (250 bytes): attached as {artifact} ---",
    ]
    assert (
        "noise" not in message["content"]
        and "--- @data/small.txt (6 bytes) ---\nsmall\n" in message["content"]
    )
    stored = await http.get(f"/artifacts/{artifact}")
    assert stored.status_code == 200 and stored.content.startswith(b"id,amount\n1,2.5\n")


async def test_listings_on_a_new_repl_all_run(repl: Tmux) -> None:
    await repl.start()
    key = await session_key(repl)
    await repl.type("/pending /grants /tools /mcp")
    await repl.wait_for(f"nothing waits for a person: session {key} starts with your first message")
    await repl.wait_for(f"no grants: session {key} starts with your first message")
    screen = await repl.wait_for("no MCP servers are declared")
    assert "ask_user    never          builtin    Ask the person you are working for" in screen
    assert "not run:" not in screen and "error:" not in screen


async def test_vi_mode_edits_the_line_with_vi_keys(repl: Tmux) -> None:
    user_settings(repl, "vi_mode = true\n")
    await repl.start()
    key = await session_key(repl)
    await repl.type("tatus", enter=False)
    await repl.keys("Escape", "0", "i")  # normal mode: to the start of the line, insert there
    await repl.type("/s")
    await repl.wait_for(f"session {key}: not started yet (Agent:demo, profile default)")
