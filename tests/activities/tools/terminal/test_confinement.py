"""Who a sandboxed command runs as, and what a kernel without Landlock or seccomp leaves open."""

from __future__ import annotations

import logging
import os
import platform
import shutil
from pathlib import Path

import pytest

from activities.tools.terminal import landlock, seccomp
from activities.tools.terminal.confinement import Confinement
from activities.tools.terminal.tool import TerminalTool
from core.settings import Settings, ToolSettings

from .sandboxing import needs_bwrap


def test_a_root_worker_runs_its_commands_as_the_sandbox_uid_and_no_other_as_itself() -> None:
    found, why = Confinement.find(4242)
    assert found is not None, why
    if os.geteuid() == 0:
        assert (found.uid, found.gid) == (4242, 4242) and found.setpriv is not None
        assert found.runner()[:6] == [
            found.setpriv,
            "--reuid=4242",
            "--regid=4242",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ]
        assert "--unshare-all" not in found.namespaces(False), "no user namespace: the uid is the host's"
    else:
        assert (found.uid, found.gid, found.setpriv) == (os.getuid(), os.getgid(), None)
        assert "--unshare-all" in found.namespaces(False)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker needs setpriv")
def test_a_root_worker_without_setpriv_has_no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda *_a, **_k: None)
    found, why = Confinement.find(60001)
    assert found is None and "setpriv" in why and "would run as root" in why


def test_what_the_kernel_lacks_is_a_gap_said_and_nothing_pretends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    found, _ = Confinement.find(60001)
    assert found is not None and found.landlock == 0 and found.seccomp is None
    assert found.gaps == (
        "Unix sockets of the host can be connected to (no seccomp filter is written for riscv64 "
        "(only x86_64, aarch64))",
        "FIFOs outside a profile's folders can be written (this kernel has no Landlock)",
    )
    assert "--seccomp" not in found.arguments([]) and landlock.VARIABLE not in found.arguments([])


@needs_bwrap
def test_the_worker_says_so_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    settings = Settings(data_dir=tmp_path / "data", tools=ToolSettings(terminal_cwd=tmp_path), _env_file=None)
    with caplog.at_level(logging.WARNING):
        TerminalTool.from_settings(settings).prepare()
    assert any("FIFOs outside a profile's folders can be written" in r.message for r in caplog.records)


def test_the_filter_checks_the_architecture_first_and_ends_every_path() -> None:
    program = seccomp.program(seccomp.MACHINES["x86_64"])
    assert len(program) % 8 == 0
    first = seccomp._op(seccomp.LOAD, seccomp.ARCH)
    assert program.startswith(first) and program.endswith(seccomp._op(seccomp.RETURN, seccomp.ALLOW))
