"""A raw TCP listener that counts connections and answers every request with fixed bytes: for
checking that an outbound call never reached it, or how a caller takes an answer no framework would
write (a bad status line, a redirect)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Listener:
    """A TCP listener that counts connections and answers every request with `answer`."""

    host: str
    port: int = 0
    answer: bytes = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
    connections: int = 0
    heads: list[bytes] = field(default_factory=list)
    """The head (request line and headers) of every request read."""

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            self.heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(self.answer)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # a TLS hello or a dropped connection: counted all the same
        finally:
            writer.close()


@asynccontextmanager
async def listening(
    host: str = "127.0.0.1", port: int = 0, ssl: ssl.SSLContext | None = None, **answer: Any
) -> AsyncIterator[Listener]:
    """A `Listener` on `host:port` (a free port when 0), closed on leaving."""
    listener = Listener(host, port, **answer)
    server = await asyncio.start_server(listener._serve, host, port, ssl=ssl)
    listener.port = server.sockets[0].getsockname()[1]
    try:
        yield listener
    finally:
        server.close()
        await server.wait_closed()
