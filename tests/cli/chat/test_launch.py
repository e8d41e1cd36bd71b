"""`synapse chat` refuses to start with settings it cannot use (naming the file and the key) or
without a terminal (pointing to `synapse run`); exit code 2 both times."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .tmux import SYNAPSE


def chat(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env = {k: v for k, v in env.items() if not k.startswith("SYNAPSE_CHAT_")}
    return subprocess.run(
        [SYNAPSE, "chat", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_bad_settings_are_named_and_nothing_starts(tmp_path: Path) -> None:
    (tmp_path / ".synapse").mkdir()
    (tmp_path / ".synapse" / "settings.toml").write_text("vi_mod = true\n")
    done = chat(tmp_path, tmp_path, "--agent", "demo")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: ~/.synapse/settings.toml: vi_mod: no such setting; did you mean vi_mode?",
        "error: --agent: agent: String should match pattern '^(Agent|Group):.+$' (got 'demo')",
    ]


def test_without_a_terminal_it_points_to_synapse_run(tmp_path: Path) -> None:
    done = chat(tmp_path, tmp_path)
    assert done.returncode == 2
    assert "synapse chat needs a terminal; for scripts and CI use `synapse run -p PROMPT`" in done.stderr
