"""An approved command runs at most once, even when its activity is retried."""

from __future__ import annotations

import os
from pathlib import Path

from activities.tools.terminal.claims import CommandClaims
from contracts import ToolResult
from core.at_rest import Sealer
from core.codec import CodecKey


def test_a_retry_gets_the_first_result_or_is_told_the_first_attempt_was_interrupted(tmp_path: Path) -> None:
    claims = CommandClaims(tmp_path / "terminal.db")
    assert claims.take("wf/run/tool_1", "touch x") is None, "the first attempt runs it"
    interrupted = claims.take("wf/run/tool_1", "touch x")
    assert interrupted is not None and not interrupted.ok and "not run twice" in (interrupted.error or "")
    done = ToolResult(tool_id="terminal", ok=True, content={"output": "", "exit_status": 0})
    claims.complete("wf/run/tool_1", done)
    assert claims.take("wf/run/tool_1", "touch x") == done
    assert claims.take("wf/run/tool_2", "touch x") is None, "another approval is another run"


def test_with_codec_keys_commands_and_results_are_stored_sealed(tmp_path: Path) -> None:
    sealer = Sealer([CodecKey("k1", os.urandom(32))])
    claims = CommandClaims(tmp_path / "terminal.db", sealer)
    assert claims.take("wf/run/tool_1", "curl -u admin:hunter2-f00 https://intranet") is None
    done = ToolResult(tool_id="terminal", ok=True, content={"output": "welcome admin hunter2-f00\n"})
    claims.complete("wf/run/tool_1", done)

    held = b"".join(p.read_bytes() for p in tmp_path.glob("terminal.db*"))
    assert b"hunter2-f00" not in held and b"sealed:v1:k1:" in held
    assert claims.take("wf/run/tool_1", "curl -u admin:hunter2-f00 https://intranet") == done
    plain = CommandClaims(tmp_path / "clear.db")
    plain.take("wf/run/tool_1", "echo hunter2-f00")
    assert b"hunter2-f00" in b"".join(p.read_bytes() for p in tmp_path.glob("clear.db*")), "the control"
