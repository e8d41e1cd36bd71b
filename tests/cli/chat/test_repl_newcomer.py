"""The real `synapse chat` in tmux, on what a newcomer tripped over (issue 50): a command's output
shown once, an edit whose pre-filled text typing replaces, a decided `/graph run` request saying
so, the footer of a REPL whose API is away at start, a recap without raw Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ...gateway import Gateway
from .test_repl import KEYS_LINE, footer, session_key
from .tmux import TMUX, Tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (Debian: apt-get install tmux)")


async def test_a_commands_output_is_shown_once(repl: Tmux) -> None:
    await repl.start()
    await repl.type("!echo $((6 * 7))1234")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    await repl.wait_for("← terminal ok: exit status 0")
    screen = await repl.wait_for("(output above)")
    assert screen.count("421234") == 1, "streamed as it ran, not repeated in the answer"
    assert "exit status 0:" in screen


async def test_enter_alone_keeps_the_pre_filled_edit(repl: Tmux) -> None:
    """Typing replaces the selected pre-filled text (`test_repl.test_edit_narrows_a_delete_before_it_runs`)."""
    await repl.start()
    await repl.type("UPDATE orders SET amount = 5 WHERE id = 5")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("e")
    await repl.wait_for("sql › UPDATE orders SET amount = 5 WHERE id = 5")
    await repl.keys("Enter")
    await repl.wait_for("nothing changed; approving as it is")
    await repl.wait_for("UPDATE done: 1 row affected.")


async def test_a_graph_run_here_says_who_approved_its_tool_call(repl: Tmux, project: Path) -> None:
    plan = {
        "new_tasks": [
            {
                "task_id": "wipe",
                "assignee_id": "Agent:demo",
                "input_data": {"sql": "DELETE FROM orders WHERE id = 6"},
            }
        ]
    }
    (project / "wipe.json").write_text(json.dumps(plan))
    await repl.start()
    await repl.type("/graph run wipe.json")
    await repl.wait_for("sql wants approval")
    await repl.wait_for(KEYS_LINE)
    await repl.keys("y")
    screen = await repl.wait_for("-tool_1 approved by alice (http)")
    approved = next(line for line in screen.splitlines() if "-tool_1 approved by alice (http)" in line)
    assert approved.startswith("✓ t"), approved
    await repl.wait_for(' completed: {"wipe": "DELETE done: 1 row affected."}')


async def test_the_footer_says_the_api_is_unreachable_at_start_and_where(
    repl: Tmux, http: httpx.AsyncClient
) -> None:
    gateway = Gateway(http.base_url.port or 80)
    await gateway.restore()
    await gateway.cut()
    repl.api = gateway.url
    try:
        await repl.start()
        await repl.wait_for(f"error: the API at {gateway.url} could not be reached")
        assert f" · API unreachable at {gateway.url} · " in await footer(repl)
        await gateway.restore()
        await repl.wait_for(" · Agent:demo · idle · ", within=15)
    finally:
        await gateway.cut()


async def test_the_recap_of_an_attached_session_shows_markdown_as_text(repl: Tmux) -> None:
    await repl.start()
    await repl.type("what does `ls -la` print?")
    await repl.wait_for("I did not understand")
    key = await session_key(repl)

    await repl.start(key)  # a new REPL, in a new window, attached to it
    screen = await repl.wait_for(f"attached to session {key}")
    assert "  alice: what does ls -la print?" in screen
    assert "`ls -la`" not in screen
