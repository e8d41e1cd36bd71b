"""The local backend: bash on a pseudo-terminal of this machine (the default)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import signal
import struct
import termios
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .backend import TerminalBackend, TerminalLost, TerminalState

READ_BYTES = 65536
COLUMNS, ROWS = 200, 50
"""The window size of a terminal (a sandbox's own terminal gets the same)."""
DEFAULT_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE)
"""Reset in the shell before it starts: a worker started in the background of a script (`worker &`,
a CI runner) ignores SIGINT and SIGQUIT, and an ignored signal stays ignored across exec, so
Ctrl-C would no longer stop a command (bash hands its children what it inherited)."""


PASSED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR")
"""What a terminal is given of the worker's environment (with every LC_*): never its secrets."""


def terminal_environment(extra: Iterable[str] = ()) -> dict[str, str]:
    """The environment a terminal starts with: `PASSED_ENV`, `LC_*` and the `extra` names, when set."""
    names = {*PASSED_ENV, *extra}
    kept = {k: v for k, v in os.environ.items() if k in names or k.startswith("LC_")}
    return {**kept, "TERM": "xterm-256color", "PS1": "", "PS2": "", "HISTFILE": "/dev/null"}


def _default_signals() -> None:
    """In the child, before exec: every signal a terminal sends is handled the default way."""
    for number in DEFAULT_SIGNALS:
        signal.signal(number, signal.SIG_DFL)


class PtyShell(TerminalBackend):
    """`bash --noprofile --norc` on a PTY, in `cwd`."""

    def __init__(
        self,
        cwd: Path | None = None,
        columns: int = COLUMNS,
        rows: int = ROWS,
        env: dict[str, str] | None = None,
    ) -> None:
        """Configure; `start` spawns it with `env` (default: `terminal_environment()`)."""
        super().__init__()
        self._cwd = cwd
        self._env = env if env is not None else terminal_environment()
        self._size = (columns, rows)
        self._process: asyncio.subprocess.Process | None = None
        self._master = -1
        self._settings: list[Any] | None = None

    async def start(self) -> None:
        """Spawn bash on a new PTY; its output is queued as it comes."""
        master, slave = pty.openpty()
        self._master = master
        self._set_size(*self._size)
        try:
            self._process = await asyncio.create_subprocess_exec(
                "bash",
                "--noprofile",
                "--norc",
                "-i",
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=self._cwd,
                env=self._env,
                start_new_session=True,
                preexec_fn=_default_signals,  # async-signal-safe: sigaction only, no locks
            )
        except OSError as err:  # no bash, or the folder it should start in is gone
            for fd in (master, slave):
                os.close(fd)
            self._master = -1
            raise TerminalLost(f"could not start bash in {self._cwd}: {err.strerror}") from err
        os.close(slave)
        os.set_blocking(master, False)
        asyncio.get_running_loop().add_reader(master, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self._master, READ_BYTES)
        except OSError:  # EIO: the shell and every process on the PTY have gone
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self._master)
            self._end()
            return
        self._chunks.put_nowait(data)

    async def send(self, data: bytes) -> None:
        """Write to the PTY (what a user types)."""
        if self.state == TerminalState.CLOSED or self._master < 0:
            raise TerminalLost("the shell has exited")
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._master, view)
            except BlockingIOError:
                await asyncio.sleep(0.01)
                continue
            except OSError as err:
                raise TerminalLost(f"the shell has exited ({err})") from err
            view = view[written:]

    def _gone(self) -> RuntimeError:
        return TerminalLost("the shell has exited")

    def shell_in_foreground(self) -> bool | None:
        """Whether bash's own process group is the PTY's foreground (no program runs)."""
        if self._process is None or self._master < 0:
            return None
        try:
            return os.tcgetpgrp(self._master) == self._process.pid
        except OSError:
            return None

    def interrupt_shell(self) -> None:
        """SIGINT to bash itself. Ctrl-C goes to the foreground program only: in a loop of short
        commands under load it often reaches a child between fork and exec (which takes it as bash
        and ignores it) or one that has just ended, and the loop goes on. Bash, given SIGINT while
        it runs a job, stops the whole command line once that job ends."""
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._process.pid, signal.SIGINT)

    def remember_settings(self) -> None:
        """Note the PTY's settings (on Linux the master's termios calls reach the shell's side)."""
        self._settings = termios.tcgetattr(self._master)

    def restore_settings(self) -> None:
        """Put them back: a sandboxed command holds the PTY while it runs and may change them
        (`stty intr T` makes the next line typed be cut at its first `T`), not what is typed next."""
        if self._settings is not None and self._master >= 0:
            termios.tcsetattr(self._master, termios.TCSANOW, self._settings)

    def _set_size(self, columns: int, rows: int) -> None:
        fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    async def resize(self, columns: int, rows: int) -> None:
        """Set the PTY's window size."""
        self._size = (columns, rows)
        if self._master >= 0:
            self._set_size(columns, rows)

    async def close(self) -> None:
        """Kill the shell's process group and close the PTY."""
        self.state = TerminalState.CLOSED
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, 9)
            await self._process.wait()
        if self._master >= 0:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self._master)
            os.close(self._master)
            self._master = -1
