"""A network between the browser and the API that a test can cut: a TCP relay on loopback whose
connections are closed, and new ones refused, until it is restored."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit


class Link:
    """Relays 127.0.0.1:<port> to the API; `cut()` drops every connection, `restore()` lets new ones in."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._open: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.down = False
        self.url = ""

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        if self.down:
            client_writer.close()
            return
        server_reader, server_writer = await asyncio.open_connection(self._host, self._port)
        self._open.update((client_writer, server_writer))

        async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        await asyncio.gather(pump(client_reader, server_writer), pump(server_reader, client_writer))
        self._open.difference_update((client_writer, server_writer))

    def cut(self) -> None:
        """Drop every connection now; refuse new ones until `restore()`."""
        self.down = True
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    def restore(self) -> None:
        self.down = False


@contextlib.asynccontextmanager
async def link_to(target: str) -> AsyncIterator[Link]:
    """A `Link` to `target` (a base URL) listening on a free loopback port (its `url`)."""
    link = Link(target)
    server = await asyncio.start_server(link._relay, "127.0.0.1", 0)
    link.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        yield link
    finally:
        link.cut()
        server.close()
        await server.wait_closed()
