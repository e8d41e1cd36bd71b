"""An approved command runs at most once, even when its activity is retried."""

from __future__ import annotations

from pathlib import Path

from activities.tools.terminal.claims import CommandClaims
from contracts import ToolResult


def test_a_retry_gets_the_first_result_or_is_told_the_first_attempt_was_interrupted(tmp_path: Path) -> None:
    claims = CommandClaims(tmp_path / "terminal.db")
    assert claims.take("wf/run/tool_1", "touch x") is None, "the first attempt runs it"
    interrupted = claims.take("wf/run/tool_1", "touch x")
    assert interrupted is not None and not interrupted.ok and "not run twice" in (interrupted.error or "")
    done = ToolResult(tool_id="terminal", ok=True, content={"output": "", "exit_status": 0})
    claims.complete("wf/run/tool_1", done)
    assert claims.take("wf/run/tool_1", "touch x") == done
    assert claims.take("wf/run/tool_2", "touch x") is None, "another approval is another run"
