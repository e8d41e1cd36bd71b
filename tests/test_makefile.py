"""The Makefile's first run, offline: it says that it installs packages and needs the package index,
instead of ending on pip's retries and "No matching distribution found for uv"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .support import free_port

ROOT = Path(__file__).resolve().parent.parent


def test_a_first_run_without_the_package_index_says_it_needs_one(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "MAKE"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=f"http://127.0.0.1:{free_port()}/simple/")
    made = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), f"VENV={venv}", f"{venv}/bin/uv"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert made.returncode != 0, made
    assert "first run: installing uv" in made.stdout and "(this needs the package index)" in made.stdout
    uv = next(
        line.split()[-1]
        for line in (ROOT / "Makefile").read_text().splitlines()
        if line.startswith("UV_VERSION")
    )
    assert made.stderr.splitlines()[-2].startswith(
        f"error: installing uv {uv} into {venv} failed: the first run needs the package index"
    ), made.stderr
