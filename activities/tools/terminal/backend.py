"""One interface for every terminal backend: a local PTY shell or a ttyd over WebSocket.

A backend moves bytes: `send` writes input, `read` waits for output, `close` ends it. States
follow seed 004: INITIALIZING until the shell is ready, IDLE between commands, BUSY while one
runs, and CLOSED once it has gone (the process exited, the connection dropped).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum


class TerminalState(StrEnum):
    """Where a terminal is in its life."""

    INITIALIZING = "initializing"
    IDLE = "idle"
    BUSY = "busy"
    CLOSED = "closed"


class TerminalLost(RuntimeError):
    """The terminal went away (its shell exited, its connection dropped)."""


class TerminalAuthFailed(RuntimeError):
    """The terminal refused the credential (never worth a retry)."""


class TerminalBackend(ABC):
    """Bytes in and out of one shell."""

    state: TerminalState = TerminalState.INITIALIZING

    @abstractmethod
    async def start(self) -> None:
        """Open the terminal (spawn the shell, connect, authenticate)."""

    @abstractmethod
    async def send(self, data: bytes) -> None:
        """Write input (keystrokes, a command line, Ctrl-C as `\\x03`)."""

    @abstractmethod
    async def read(self, within: float) -> bytes | None:
        """Output that arrived, waiting at most `within` seconds (None: nothing yet).

        Raises:
            TerminalLost: The terminal has gone.
        """

    @abstractmethod
    async def resize(self, columns: int, rows: int) -> None:
        """Tell the shell its window size."""

    @abstractmethod
    async def close(self) -> None:
        """End the terminal and release what it holds."""
