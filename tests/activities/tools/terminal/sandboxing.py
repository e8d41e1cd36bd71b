"""What the sandbox tests share: whether bwrap works here, and a terminal with something to protect."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from activities.tools.terminal.sandbox import Sandbox
from activities.tools.terminal.tool import TerminalTool
from contracts import SandboxProfile, ToolCallRequest, ToolResult, ToolRun
from core.settings import Settings, ToolSettings

_, _WHY = Sandbox.find("bwrap", [Path.cwd()], Path.cwd())
needs_bwrap = pytest.mark.skipif(
    bool(_WHY),
    reason=f"the terminal sandbox cannot run here: {_WHY}; .ci/run installs it",
)
"""Marks a test that needs a working bubblewrap; it is skipped, with the reason, where there is none."""

SECRET = "synapse-canary-7f3e9a1c"
"""Planted outside the trusted folder, in the worker's environment and in the worker's data dir."""


OWNER = "session:t"
"""The workflow the tests' commands run for."""


def call(command: str) -> ToolCallRequest:
    """A terminal call."""
    return ToolCallRequest(tool_id="terminal", arguments={"command": command})


def tool_run(
    command: str, interaction_id: str | None = None, sandbox: SandboxProfile | None = None
) -> ToolRun:
    """A run of `command` for `OWNER`: approved by `interaction_id` for `sandbox` (None: the
    worker's default), or without an approval."""
    return ToolRun(owner_id=OWNER, interaction_id=interaction_id, call=call(command), sandbox=sandbox)


def snapshot(*roots: Path, skip: Path | None = None) -> dict[str, str]:
    """Every file under `roots` but `skip` (symlinks as their targets) and a hash of its content."""
    seen: dict[str, str] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if skip is not None:
                dirs[:] = [name for name in dirs if Path(folder) / name != skip]
            for name in [*dirs, *files]:
                path = Path(folder) / name
                if path.is_symlink():
                    seen[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_file():
                    seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    seen[str(path)] = "dir"
    return seen


@dataclass
class Bench:
    """A worker's terminal tool with a trusted folder (`work`), a secret outside it (`outside`),
    symlinks leading out, and the worker's data dir holding a secret too."""

    tool: TerminalTool
    root: Path
    work: Path
    outside: Path
    data: Path

    async def free(self, command: str) -> ToolResult | None:
        """Run `command` as an agent would without approval: None when it is asked for instead."""
        needs_approval, _ = self.tool.assess(call(command), {})
        if needs_approval:
            return None
        return await self.tool.run(tool_run(command))

    async def approved(self, command: str, profile: SandboxProfile | None, interaction_id: str) -> ToolResult:
        """Run `command` as approved by `interaction_id` under `profile` (None: the worker's default)."""
        return await self.tool.run(tool_run(command, interaction_id, profile))

    def untouched(self) -> dict[str, str]:
        """What a harmless command leaves as it found it: the trusted folder, the folder outside, and
        the secret in the worker's data dir (where the worker itself keeps writing its own files)."""
        planted = self.data / "worker-secret.txt"
        return {**snapshot(self.work, self.outside, skip=self.data), str(planted): planted.read_text()}

    async def close(self) -> None:
        await self.tool.runner.terminals.close()


def bench(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    allow: str | None = None,
    data_in_work: bool = False,
    data: Path | None = None,
    env_file: bool = True,
    **tools: object,
) -> Bench:
    """Lay out `root` and configure a terminal tool on it (the secret in the worker's environment).

    `data_in_work`: the worker's data dir is `.synapse` in the trusted folder, and the worker runs
    there, with a `.env` holding a secret unless `env_file` is false (as `make up` does). `data`:
    the data dir's path under `root` instead."""
    work, outside = root / "work", root / "outside"
    data = root / data if data is not None else work / ".synapse" if data_in_work else root / "data"
    for folder in (work / "sub", outside, data):
        folder.mkdir(parents=True)
    (work / "README.md").write_text("# Hello\nThis folder is trusted.\n")
    (work / "notes.txt").write_text("x marks the spot\nno x here? yes x\n")
    (work / "victim.txt").write_text("must survive\n")
    (work / "sub" / "deep.txt").write_text("deep\n")
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (data / "worker-secret.txt").write_text(f"{SECRET}\n")
    (work / "link_to_secret").symlink_to(outside / "secret.txt")
    (work / "link_to_outside").symlink_to(outside)
    (work / "link_to_data").symlink_to(data)
    (work / "link_to_outside_secret").symlink_to(outside / "secret.txt")
    if data_in_work:
        if env_file:
            (work / ".env").write_text(f"LARK_APP_SECRET={SECRET}\n")
        monkeypatch.chdir(work)
    monkeypatch.setenv("SYNAPSE_CANARY", SECRET)
    settings = Settings(
        data_dir=data,
        tools=ToolSettings.model_validate(
            {
                "terminal_cwd": work,
                "terminal_idle_seconds": 5,
                "terminal_timeout_seconds": 15,
                **({"terminal_allow": allow} if allow is not None else {}),
                **tools,
            }
        ),
        _env_file=None,
    )
    tool = TerminalTool.from_settings(settings)
    tool.prepare()
    return Bench(tool, root, work, outside, data)
