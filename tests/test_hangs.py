"""A test that hangs is stopped and names itself: which test, and where it waits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HANGING = """
import asyncio
import subprocess

import pytest


@pytest.fixture
async def cleanup():
    child = subprocess.Popen(["sleep", "300"])
    with open("child.pid", "w") as pid:
        pid.write(str(child.pid))
    yield
    await asyncio.Event().wait()  # a teardown that never ends


async def test_fails_then_hangs(cleanup):
    assert 1 == 2


def test_after():
    pass
"""


def test_a_failed_test_whose_teardown_hangs_is_stopped_and_named(tmp_path: Path) -> None:
    (tmp_path / "test_hanging.py").write_text(HANGING)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
        "asyncio_default_test_loop_scope = session\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not an xdist worker
    env["PYTHONPATH"] = str(ROOT)

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.hangs", "-o", "hang_timeout=3", "-p", "no:xdist"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    assert "test_hanging.py::test_fails_then_hangs still running after 3 s (worker main)" in output
    assert "await asyncio.Event().wait()  # a teardown that never ends" in output, output
    assert "1 passed" not in output, "the run stopped there: test_after never ran"
    child = int((tmp_path / "child.pid").read_text())
    assert not Path(f"/proc/{child}").exists() or "State:\tZ" in Path(f"/proc/{child}/status").read_text(), (
        "what the hung test started was killed with it"
    )
