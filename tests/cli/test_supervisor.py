"""The supervisor notices a dying child, honours stop requests and never leaves a child behind."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from cli.supervisor import ChildExited, Interrupted, Supervisor
from tests.conftest import assert_eventually

from .procs import alive

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
STUBBORN = [
    sys.executable,
    "-c",
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
    "time.sleep(60)",
]


async def test_a_child_exiting_interrupts_the_wait() -> None:
    sup = Supervisor()
    sleeper = await sup.start("sleeper", SLEEPER, os.environ)
    await sup.start("quitter", [sys.executable, "-c", "raise SystemExit(3)"], os.environ)

    with pytest.raises(ChildExited) as exited:
        await sup.wait()
    await sup.stop_all()

    assert str(exited.value) == "quitter exited with code 3"
    assert sleeper.returncode is not None and not alive(sleeper.pid)


async def test_a_stop_request_interrupts_the_work() -> None:
    sup = Supervisor()
    child = await sup.start("sleeper", SLEEPER, os.environ)
    sup.stop_requested.set()

    with pytest.raises(Interrupted):
        await sup.race(asyncio.sleep(60))
    await sup.stop_all()

    assert child.returncode == -15  # SIGTERM


async def test_work_finishing_first_returns_its_result() -> None:
    sup = Supervisor()
    await sup.start("sleeper", SLEEPER, os.environ)

    async def work() -> str:
        return "done"

    assert await sup.race(work()) == "done"
    await sup.stop_all()


async def test_a_child_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sup = Supervisor()
    child = await sup.start("stubborn", STUBBORN, os.environ, log=tmp_path / "stubborn.log")

    async def lines() -> list[str]:
        return child.log_tail()

    await assert_eventually(lines, lambda tail: tail == ["ready"], what="SIGTERM ignored")
    await sup.stop_all(grace=0.5)

    assert child.returncode == -9
    assert "stubborn did not stop in 0.5s; killing it" in capsys.readouterr().out


async def test_output_goes_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    sup = Supervisor()
    child = await sup.start(
        "talker", [sys.executable, "-c", "print('hello'); raise SystemExit(1)"], os.environ, log
    )

    with pytest.raises(ChildExited) as exited:
        await sup.wait()

    assert child.log_tail() == ["hello"]
    assert str(exited.value) == f"talker exited with code 1 (its output is in {log})"


async def test_a_dead_childs_log_shows_why_above_its_last_lines(tmp_path: Path) -> None:
    """A Go program that dies prints the reason, then a stack trace longer than the tail."""
    log = tmp_path / "server.log"
    script = (
        "print('starting'); print('Error: listen tcp 127.0.0.1:7233: bind: address already in use'); "
        "[print(f'  frame {n}') for n in range(30)]; raise SystemExit(2)"
    )
    sup = Supervisor()
    child = await sup.start("server", [sys.executable, "-c", script], os.environ, log)
    with pytest.raises(ChildExited):
        await sup.wait()
    assert child.log_tail(lines=3) == [
        "Error: listen tcp 127.0.0.1:7233: bind: address already in use",
        "…",
        "  frame 27",
        "  frame 28",
        "  frame 29",
    ]
