"""The terminal tool's own rules, on a real PTY."""

from __future__ import annotations

import sys
from pathlib import Path

from activities.tools.terminal.tool import TerminalTool
from contracts import ToolCallRequest
from core.settings import Settings, ToolSettings

AGENT_CLI = Path(__file__).parents[3] / "fakes" / "agent_cli.py"


def _call(command: str) -> ToolCallRequest:
    return ToolCallRequest(tool_id="terminal", arguments={"command": command})


async def test_input_for_a_program_at_its_prompt_always_needs_approval(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, tools=ToolSettings(terminal_cwd=tmp_path), _env_file=None)
    tool = TerminalTool.from_settings(settings)
    free, _ = tool.assess(_call("ls"))
    assert free is False, "ls in the trusted folder is free in the shell"
    started = await tool.run(_call(f"{sys.executable} {AGENT_CLI}"), "session:t/run/tool_1")
    assert started.ok and started.content["waiting_for_input"] == ">"
    refused = await tool.run(_call("ls"), None)
    assert not refused.ok and "needs a person's approval" in (refused.error or "")
    approved = await tool.run(_call("/quit"), "session:t/run/tool_2")
    assert approved.ok and approved.content["output"] == "bye\n"
    back = await tool.run(_call("ls"), None)
    assert back.ok, "back in the shell, ls is free again"


def test_where_a_command_runs_is_said_only_when_known(tmp_path: Path) -> None:
    pty = TerminalTool.from_settings(
        Settings(data_dir=tmp_path, tools=ToolSettings(terminal_cwd=tmp_path), _env_file=None)
    )
    assert pty.context(_call("ls")) == {"cwd": str(tmp_path.resolve())}
    ttyd = ToolSettings(terminal_backend="ttyd", terminal_cwd=tmp_path)
    remote = TerminalTool.from_settings(Settings(data_dir=tmp_path, tools=ttyd, _env_file=None))
    assert remote.context(_call("ls")) == {"cwd": None}, "a ttyd terminal's folder is known after a command"
