"""The benchmark's own HTTP requests, sent as plainly as curl sends them.

A user's requests come from their own machine: what their client costs is not the API's work.
The benchmark runs in the API's process, so a heavy client would be counted against Synapse (and
would delay the API on the same event loop): httpx spent about 1.6 ms of CPU per request here,
more than the API's own handling of a message. So the requests the benchmark times (a message, an
approval) go out on kept-alive HTTP/1.1 connections written and read by hand, as `watchers.py`
reads its streams; everything else still uses the real client (`core.client`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

READ_LIMIT = 2**22
"""Largest header line or body a response may have (bytes)."""


class PlainHttp:
    """JSON requests to one server on a pool of kept-alive connections (one request per connection
    at a time; a connection the server closed is replaced)."""

    def __init__(self, base_url: str) -> None:
        url = urlsplit(base_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: dict[str, Any], *, expect: int) -> bytes:
        """`POST path` with `body` as JSON; the response body, which must come with status `expect`."""
        status, content = await self._post(path, body)
        if status != expect:
            raise RuntimeError(f"POST {path} answered {status}: {content[:500]!r}")
        return content

    async def _post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        data = json.dumps(body).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode()
        if self._idle:
            reader, writer = self._idle.pop()
            try:
                return await self._exchange(reader, writer, head + data)
            except (ConnectionError, asyncio.IncompleteReadError):
                writer.close()  # closed by the server while idle: send again on a new one
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=READ_LIMIT)
        return await self._exchange(reader, writer, head + data)

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> tuple[int, bytes]:
        writer.write(request)
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionResetError("the server closed the connection")
        status = int(status_line.split()[1])
        length, chunked, keep = 0, False, True
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value
            elif name == "connection":
                keep = value != "close"
        content = await (_chunks(reader) if chunked else reader.readexactly(length))
        if keep:
            self._idle.append((reader, writer))
        else:
            writer.close()
        return status, content

    async def close(self) -> None:
        """Close every idle connection."""
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    """A chunked body, whole."""
    body = bytearray()
    while size := int((await reader.readline()).split(b";")[0], 16):
        body += await reader.readexactly(size)
        await reader.readline()  # the CRLF after the chunk
    await reader.readline()  # the CRLF after the last (empty) chunk
    return bytes(body)
