"""Tries every way out of the terminal sandbox and prints what happened, one JSON object.

Run as `python3 escape.py PORT WORKER_PID SECRET_PATH FIFO SOCKET` inside a sandbox by the escape
tests (with an allowlist no one should configure); the tests then check the host, not this script's
word for it. A kernel setting is only ever written with the value it has.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import socket
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path


def attempt(report: dict[str, list[object]], name: str, action: Callable[[], object]) -> None:
    """`[true, what it got]` when the action worked, `[false, why not]` when it was refused."""
    try:
        got = action()
        report[name] = [True, got if isinstance(got, list | str | int) else repr(got)[:200]]
    except Exception as err:
        report[name] = [False, f"{type(err).__name__}: {err}"[:200]]


def main() -> None:
    port, worker_pid, secret_path, fifo, unix = int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:6]
    here = Path.cwd()
    libc = ctypes.CDLL(None, use_errno=True)
    report: dict[str, list[object]] = {}

    def remount() -> int:
        flags = 32 | 4096  # MS_REMOUNT | MS_BIND
        if libc.mount(None, str(here).encode(), None, flags, None) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        Path("after-remount.txt").write_text("x")
        return 0

    def inject() -> str:
        for fd in (0, 1, 2):
            with contextlib.suppress(OSError):
                for byte in b"touch injected-by-tiocsti\n":
                    fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
                return f"injected on fd {fd}"
        raise PermissionError("TIOCSTI refused on fds 0-2")

    def same_sysctl() -> int:
        knob = Path("/proc/sys/fs/lease-break-time")
        return knob.write_text(knob.read_text())  # its own value: harmless even if it worked

    def connect_unix() -> int:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix_socket:
            unix_socket.connect(unix)
        return 0

    attempt(report, "write", lambda: Path("pwned.txt").write_text("x"))
    attempt(report, "write a FIFO", lambda: os.write(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), b"leak"))
    attempt(report, "connect a Unix socket", connect_unix)
    attempt(report, "write a sysctl", same_sysctl)
    attempt(report, "open the SysRq trigger", lambda: os.close(os.open("/proc/sysrq-trigger", os.O_WRONLY)))
    attempt(report, "uid", os.getuid)
    attempt(report, "delete", lambda: Path("victim.txt").unlink())
    attempt(report, "secret", lambda: Path(secret_path).read_text())
    attempt(report, "symlinked secret", lambda: Path("link_to_secret").read_text())
    attempt(
        report, "pid 1 environment", lambda: Path("/proc/1/environ").read_bytes().decode("utf-8", "replace")
    )
    attempt(report, "environment", lambda: sorted(os.environ))
    attempt(report, "processes", lambda: sorted(p for p in os.listdir("/proc") if p.isdigit()))
    attempt(report, "signal the worker", lambda: os.kill(worker_pid, 0))
    attempt(report, "connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
    attempt(report, "set the clock", lambda: time.clock_settime(time.CLOCK_REALTIME, time.time()))
    attempt(report, "set the hostname", lambda: socket.sethostname(socket.gethostname()))
    attempt(report, "remount writable", remount)
    attempt(report, "type into the terminal", inject)
    attempt(report, "home", lambda: os.listdir(os.path.expanduser("~")))
    attempt(report, "etc", lambda: sorted(os.listdir("/etc")))
    attempt(report, "users", lambda: Path("/etc/passwd").read_text().splitlines())
    print(json.dumps(report))  # noqa: T201 (its report is its output)


if __name__ == "__main__":
    main()
