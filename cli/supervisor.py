"""A small process supervisor: start children, notice when one dies, stop them all cleanly.

Each child runs in its own session (so a terminal's Ctrl-C reaches only the supervisor, which
then stops the children in order) and, on Linux, asks the kernel to send it SIGTERM when the
supervisor dies, so even `kill -9` of `synapse up` leaves no orphans.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

STOP_TIMEOUT = 10.0
"""Seconds a child gets to exit after SIGTERM before it is killed."""

_PR_SET_PDEATHSIG = 1

SAYS_WHY = re.compile(r"\b(error|panic|fatal|failed|refused|in use)\b", re.IGNORECASE)
"""A log line that says what went wrong."""
SAYS_WHY_KEPT = 3
"""Such lines shown above a dead child's last lines."""


class ChildExited(Exception):
    """A supervised child exited while the supervisor still needed it."""

    def __init__(self, child: Child) -> None:
        """Record which child exited and how."""
        code = child.returncode
        if code is not None and code < 0:
            how = f"was killed by {_signal_name(-code)}"
        else:
            how = f"exited with code {code}"
        where = f" (its output is in {child.log})" if child.log else ""
        super().__init__(f"{child.name} {how}{where}")
        self.child = child


def _signal_name(number: int) -> str:
    """`SIGKILL` for 9, or the number when Python has no name for it."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Interrupted(Exception):
    """The supervisor was asked to stop (SIGINT or SIGTERM)."""


@dataclass
class Child:
    """One supervised process.

    Attributes:
        name: Human name used in messages ("Temporal dev server", "worker", "API").
        process: The running process.
        exited: Completes with the exit code when the process ends.
        log: The file its output goes to, if not the terminal.
    """

    name: str
    process: asyncio.subprocess.Process
    exited: asyncio.Future[int] = field(repr=False)
    log: Path | None = None

    def log_tail(self, lines: int = 10) -> list[str]:
        """The last `lines` lines of the child's log, after its last few lines that say what went
        wrong (a dev server that dies ends with a Go stack trace: the reason is above it). Empty
        when it logs to the terminal."""
        if self.log is None or not self.log.is_file():
            return []
        text = self.log.read_text(errors="replace").splitlines()
        tail = text[-lines:]
        said = [line for line in text[:-lines] if SAYS_WHY.search(line)][-SAYS_WHY_KEPT:]
        return [*said, *(["…"] if said else []), *tail]

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code (negative: killed by that signal), or None while it runs."""
        return self.process.returncode


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A `preexec_fn` that makes the child get SIGTERM when its parent dies (Linux only).

    `prctl` is looked up here, before the fork: loading a library in a forked child of a
    threaded process can deadlock.
    """
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


class Supervisor:
    """Starts child processes and stops them all, latest first, when asked or when one dies."""

    def __init__(self) -> None:
        """Create a supervisor with no children and no stop requested."""
        self.children: list[Child] = []
        self.stop_requested = asyncio.Event()

    async def start(
        self, name: str, argv: Sequence[str], env: Mapping[str, str], log: Path | None = None
    ) -> Child:
        """Start `argv` as a supervised child in its own session.

        Args:
            name: Human name of the child for messages.
            argv: Program and arguments.
            env: The child's complete environment.
            log: File its stdout and stderr are appended to (inherited when None).

        Returns:
            The started child.
        """
        preexec = _die_with_parent(os.getpid()) if sys.platform == "linux" else None
        with contextlib.ExitStack() as files:
            output = files.enter_context(log.open("ab")) if log is not None else None
            process = await asyncio.create_subprocess_exec(
                *argv,
                env=dict(env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
                preexec_fn=preexec,
            )
        child = Child(name, process, asyncio.ensure_future(process.wait()), log)
        self.children.append(child)
        return child

    async def race(self, work: Awaitable[T]) -> T:
        """Run `work` unless a child exits or a stop is requested first.

        Raises:
            ChildExited: A child exited before `work` finished.
            Interrupted: A stop was requested before `work` finished.
        """
        task = asyncio.ensure_future(work)
        stop = asyncio.ensure_future(self.stop_requested.wait())
        try:
            await asyncio.wait(
                [task, stop, *(c.exited for c in self.children)], return_when=asyncio.FIRST_COMPLETED
            )
            self._raise_if_over()
            return task.result()
        finally:
            for pending in (task, stop):
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending

    async def wait(self) -> None:
        """Wait until a child exits or a stop is requested.

        Raises:
            ChildExited: A child exited.
            Interrupted: A stop was requested.
        """
        await self.race(asyncio.Future[None]())  # a future nobody completes

    def _raise_if_over(self) -> None:
        for child in self.children:
            if child.exited.done():
                raise ChildExited(child)
        if self.stop_requested.is_set():
            raise Interrupted

    async def stop_all(self, grace: float = STOP_TIMEOUT) -> None:
        """Stop every child, latest first: SIGTERM, up to `grace` seconds, then SIGKILL.

        The signals go to each child's whole process group, so its own children stop too.
        """
        for child in reversed(self.children):
            if child.exited.done():
                continue
            _signal_group(child, signal.SIGTERM)
            try:
                async with asyncio.timeout(grace):
                    await asyncio.shield(child.exited)
            except TimeoutError:
                print(f"{child.name} did not stop in {grace:g}s; killing it", flush=True)
                _signal_group(child, signal.SIGKILL)
                await child.exited
        for child in self.children:  # a group may outlive its leader; make sure it is gone
            _signal_group(child, signal.SIGKILL)


def _signal_group(child: Child, sig: signal.Signals) -> None:
    """Send `sig` to the child's process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, sig)
