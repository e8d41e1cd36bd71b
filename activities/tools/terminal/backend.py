"""One interface for every terminal backend: a local PTY shell or a ttyd over WebSocket.

A backend moves bytes: `send` writes input, `read` waits for output, `close` ends it. States
follow seed 004: INITIALIZING until the shell is ready, IDLE between commands, BUSY while one
runs, and CLOSED once it has gone (the process exited, the connection dropped).
"""

from __future__ import annotations

import asyncio
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
    """Bytes in and out of one shell; a backend queues what it receives (None: it has gone)."""

    state: TerminalState = TerminalState.INITIALIZING

    def __init__(self) -> None:
        self._chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.ended = False
        """The shell exited or the connection dropped (seen even while nobody reads)."""

    def _end(self) -> None:
        """No more output will come (called by the backend's reader)."""
        self.ended = True
        self._chunks.put_nowait(None)

    @abstractmethod
    async def start(self) -> None:
        """Open the terminal (spawn the shell, connect, authenticate)."""

    @abstractmethod
    async def send(self, data: bytes) -> None:
        """Write input (keystrokes, a command line, Ctrl-C as `\\x03`)."""

    async def read(self, within: float) -> bytes | None:
        """Output that arrived, waiting at most `within` seconds (None: nothing yet).

        Raises:
            TerminalLost: The terminal has gone (`TerminalAuthFailed` when it refused us).
        """
        if self.state == TerminalState.CLOSED and self._chunks.empty():
            raise self._gone()
        try:
            chunk = await asyncio.wait_for(self._chunks.get(), within)
        except TimeoutError:
            return None
        if chunk is None:
            self.state = TerminalState.CLOSED
            raise self._gone()
        return chunk

    def _gone(self) -> RuntimeError:
        """Why there is no more output."""
        return TerminalLost("the terminal has gone")

    def shell_in_foreground(self) -> bool | None:
        """Whether the shell itself holds the terminal (no program runs); None when unknown."""
        return None

    def interrupt_shell(self) -> None:
        """Also give the shell itself SIGINT (where it runs here): a loop of short commands then stops
        when its current one ends, even if the Ctrl-C typed reached none of them."""
        return None  # a terminal elsewhere (ttyd): the typed Ctrl-C is all there is

    def remember_settings(self) -> None:
        """Note the terminal's settings as they are now, the shell waiting for a line (a terminal
        Synapse does not sandbox keeps none)."""
        return None  # a terminal elsewhere (ttyd) runs nothing sandboxed: nothing to guard against

    def restore_settings(self) -> None:
        """Put the terminal's settings back as noted, before a line is typed into the shell."""
        return None  # see remember_settings

    @abstractmethod
    async def resize(self, columns: int, rows: int) -> None:
        """Tell the shell its window size."""

    @abstractmethod
    async def close(self) -> None:
        """End the terminal and release what it holds."""
