"""The ttyd backend: a terminal served by ttyd (https://github.com/tsl0922/ttyd) over WebSocket.

Protocol (ttyd 1.7.7, see NOTES): path `/ws`, subprotocol `tty`; the client speaks first with JSON
`{"AuthToken", "columns", "rows"}`; then binary frames: server `0`+output, `1`+title,
`2`+preferences; client `0`+input, `1`+`{"columns","rows"}`, `2` pause, `3` resume. With a
credential (`user:pass`) the upgrade request carries HTTP basic auth and `AuthToken` is the same
base64 string: a wrong one makes ttyd drop the connection before answering (basic auth) or close
it with 1008 (token). Either is `TerminalAuthFailed`, never retried and never a hang. A refused
or failed connection is tried again twice; a connection that drops between commands is replaced
by a new one before the next command (the terminal tool reconnects: see `TerminalBackend.ended`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidMessage
from websockets.typing import Subprotocol

from .backend import TerminalAuthFailed, TerminalBackend, TerminalLost, TerminalState

POLICY_VIOLATION = 1008
"""The close code ttyd answers a wrong `AuthToken` with."""
OPEN_TIMEOUT = 10.0
PAUSE_AT = 64 * 1024
"""Output bytes queued and not read yet that make us send `2` (pause); `3` (resume) follows at
`RESUME_AT`. ttyd 1.7.7 takes both as no-ops (see NOTES); a server that honours them is spared
a reader that fell behind."""
RESUME_AT = 8 * 1024
CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF = 0.5
"""Seconds before the second attempt (doubling after): a restarting ttyd is back within them."""


def basic_token(credential: str | None) -> str:
    """`base64(user:pass)`: ttyd's basic-auth value and `AuthToken` ("" without a credential)."""
    return base64.b64encode(credential.encode()).decode() if credential else ""


class TtydTerminal(TerminalBackend):
    """A ttyd terminal at `url` (e.g. `ws://127.0.0.1:7681/ws`)."""

    def __init__(self, url: str, credential: str | None = None, columns: int = 200, rows: int = 50) -> None:
        """Configure; `start` connects."""
        super().__init__()
        self._url = url
        self._token = basic_token(credential)
        self._size = (columns, rows)
        self._ws: ClientConnection | None = None
        self.paused = False
        """A `2` (pause) was sent and no `3` (resume) yet."""
        self._backlog = 0
        """Output bytes queued and not read yet."""
        self._reader: asyncio.Task[None] | None = None
        self._refused = False

    async def start(self) -> None:
        """Connect (retrying `CONNECT_ATTEMPTS` times: ttyd may be restarting), authenticate and send
        the handshake; output is queued as it comes."""
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                await self._connect()
                return
            except TerminalAuthFailed:
                raise
            except TerminalLost:
                if attempt == CONNECT_ATTEMPTS:
                    raise
                await asyncio.sleep(CONNECT_BACKOFF * attempt)

    async def _connect(self) -> None:
        headers = {"Authorization": f"Basic {self._token}"} if self._token else {}
        try:
            self._ws = await websockets.connect(
                self._url,
                subprotocols=[Subprotocol("tty")],
                additional_headers=headers,
                open_timeout=OPEN_TIMEOUT,
            )
        except (InvalidMessage, EOFError, ConnectionResetError) as err:
            # ttyd drops a refused (or missing) basic auth without an HTTP answer
            hint = (
                "the credential was refused"
                if self._token
                else "it wants a credential (SYNAPSE_TTYD_CREDENTIAL)"
            )
            raise TerminalAuthFailed(
                f"terminal authentication failed: {self._url} dropped the connection before answering ({hint})"
            ) from err
        except (InvalidHandshake, OSError, TimeoutError) as err:
            raise TerminalLost(f"no terminal at {self._url}: {err!r}") from err
        columns, rows = self._size
        await self._ws.send(
            json.dumps({"AuthToken": self.handshake_token(), "columns": columns, "rows": rows})
        )
        self._reader = asyncio.create_task(self._read_frames(self._ws))

    def handshake_token(self) -> str:
        """The `AuthToken` of the handshake: the credential's base64, as ttyd expects."""
        return self._token

    async def _read_frames(self, ws: ClientConnection) -> None:
        try:
            async for message in ws:
                data = message if isinstance(message, bytes) else message.encode()
                if data[:1] == b"0":
                    self._chunks.put_nowait(data[1:])
                    self._backlog += len(data) - 1
                    if not self.paused and self._backlog >= PAUSE_AT:
                        await self._flow(b"2")
        except ConnectionClosed:
            pass
        finally:
            if ws.close_code == POLICY_VIOLATION:
                self._refused = True
            self._end()

    async def read(self, within: float) -> bytes | None:
        """Output, as the base class reads it; a paused flow resumes once the backlog is read."""
        chunk = await super().read(within)
        self._backlog -= len(chunk or b"")
        if self.paused and self._backlog <= RESUME_AT:
            await self._flow(b"3")
        return chunk

    async def _flow(self, frame: bytes) -> None:
        """`2` pause / `3` resume: ask ttyd to hold its output while we have a backlog."""
        self.paused = frame == b"2"
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._ws.send(frame)

    async def send(self, data: bytes) -> None:
        """Input, as a `0` frame."""
        if self._ws is None or self.state == TerminalState.CLOSED:
            raise TerminalLost("the terminal connection is closed")
        try:
            await self._ws.send(b"0" + data)
        except ConnectionClosed as err:
            raise TerminalLost(f"the terminal connection dropped ({err})") from err

    def _gone(self) -> RuntimeError:
        if self._refused:
            return TerminalAuthFailed(f"terminal authentication failed: {self._url} refused the token (1008)")
        return TerminalLost(f"the terminal connection to {self._url} dropped")

    async def resize(self, columns: int, rows: int) -> None:
        """A `1` frame with the new size."""
        self._size = (columns, rows)
        if self._ws is not None:
            await self._ws.send(b"1" + json.dumps({"columns": columns, "rows": rows}).encode())

    async def close(self) -> None:
        """Close the connection."""
        self.state = TerminalState.CLOSED
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
