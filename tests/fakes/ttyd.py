"""A ttyd stand-in on loopback that speaks ttyd 1.7.7's protocol in front of a real PTY (bash):
subprotocol `tty`, basic auth on the upgrade (refused: the TCP connection is dropped without an
HTTP answer), the JSON handshake with `AuthToken` (wrong: close 1008), `0`/`1`/`2` frames out and
`0`/`1`/`2`/`3` in (unlike ttyd 1.7.7 it honours pause and resume). It can
drop every connection mid-command, as a crashed ttyd or a broken network would."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from activities.tools.terminal.backend import TerminalLost
from activities.tools.terminal.pty_shell import PtyShell
from activities.tools.terminal.ttyd import basic_token


@dataclass
class FakeTtyd:
    """The stand-in's address and what it saw."""

    credential: str | None
    url: str = ""
    sizes: list[tuple[int, int]] = field(default_factory=list)
    connections: list[ServerConnection] = field(default_factory=list)
    flow: list[str] = field(default_factory=list)
    """`pause` / `resume` as the client asked (the stand-in honours them: output waits)."""
    _flowing: asyncio.Event = field(default_factory=asyncio.Event)

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if (
            self.credential
            and request.headers.get("Authorization") != f"Basic {basic_token(self.credential)}"
        ):
            assert connection.transport is not None
            connection.transport.abort()  # ttyd answers nothing to a refused basic auth
        return None

    async def handle(self, ws: ServerConnection) -> None:
        self.connections.append(ws)
        hello = json.loads(await ws.recv())
        if self.credential and hello.get("AuthToken") != basic_token(self.credential):
            await ws.close(1008, "bad token")
            return
        self.sizes.append((hello["columns"], hello["rows"]))
        shell = PtyShell(columns=hello["columns"], rows=hello["rows"])
        await shell.start()
        await ws.send(b"1bash (fake ttyd)")
        await ws.send(b"2" + json.dumps({}).encode())
        pump = asyncio.create_task(self._pump(shell, ws))
        try:
            async for message in ws:
                data = message if isinstance(message, bytes) else message.encode()
                if data[:1] == b"0":
                    await shell.send(data[1:])
                elif data[:1] in (b"2", b"3"):
                    self.flow.append("pause" if data[:1] == b"2" else "resume")
                    (self._flowing.clear if data[:1] == b"2" else self._flowing.set)()
                elif data[:1] == b"1":
                    size = json.loads(data[1:])
                    self.sizes.append((size["columns"], size["rows"]))
                    await shell.resize(size["columns"], size["rows"])
        finally:
            pump.cancel()
            await shell.close()

    async def _pump(self, shell: PtyShell, ws: ServerConnection) -> None:
        self._flowing.set()
        with contextlib.suppress(TerminalLost):
            while True:
                await self._flowing.wait()
                chunk = await shell.read(1.0)
                if chunk:
                    await ws.send(b"0" + chunk)

    def drop(self) -> None:
        """Drop every connection without a close frame."""
        for ws in self.connections:
            if ws.transport is not None:
                ws.transport.abort()


@asynccontextmanager
async def fake_ttyd(credential: str | None = None, port: int = 0) -> AsyncIterator[FakeTtyd]:
    """The stand-in on loopback, on `port` or a free one (`url` is its `/ws` endpoint)."""
    fake = FakeTtyd(credential)
    server: Server
    async with serve(
        fake.handle,
        "127.0.0.1",
        port,
        subprotocols=[Subprotocol("tty")],
        process_request=fake.process_request,
    ) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/ws"
        yield fake
