"""`python -m bench.watchers BASE_URL KEY N`: N SSE clients of one session, in a process of their own.

People watching a session sit at their own machines: their reading and parsing is not the API's
work. So the crowded stream benchmark runs its watchers here, not beside the API and the worker,
and each reads its connection as plainly as a browser does (HTTP/1.1 on a socket, split into lines
as it arrives): the N share this one process, so what each costs to read delays the last of them.
Prints `ready` once every connection is answered, then, whenever the last of the N has received the
k-th chunk of a kind, `<kind> <k> <time>`: `time.perf_counter()` of that last arrival
(CLOCK_MONOTONIC, one clock for every process of this machine, so the benchmark can compare it with
its own). Ends when the streams end or the benchmark stops it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from urllib.parse import urlsplit

PREFIX = b"event: "
READ_SIZE = 2**16


async def watch(base_url: str, key: str, count: int) -> None:
    """Follow the session on `count` connections; print as the module says."""
    opened = 0
    arrivals: dict[tuple[str, int], int] = {}
    latest: dict[tuple[str, int], float] = {}

    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    request = (
        f"GET /sessions/{key}/events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n"
    ).encode()

    async def follow() -> None:
        nonlocal opened
        seen: dict[str, int] = {}
        # 4 MiB read ahead before the connection is paused
        reader, writer = await asyncio.open_connection(host, port, limit=2**22)
        writer.write(request)
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"GET /sessions/{key}/events answered {status!r}")
        while await reader.readline() not in (b"\r\n", b""):
            pass  # the headers
        opened += 1
        if opened == count:
            print("ready", flush=True)
        # The body is chunked; a chunk-size line never starts with `event: `. What arrives is
        # split into lines as it comes (one read per burst, not one call per line: the N share
        # this process, people at their own machines share nothing).
        rest = b""
        while data := await reader.read(READ_SIZE):
            rest += data
            if b"\n" not in data:
                continue  # a long line still arriving: split it once it is whole
            *lines, rest = rest.split(b"\n")
            at = time.perf_counter()
            for line in lines:
                if not line.startswith(PREFIX):
                    continue
                kind = line[len(PREFIX) :].strip().decode()
                seen[kind] = seen.get(kind, 0) + 1
                which = (kind, seen[kind])
                arrivals[which] = arrivals.get(which, 0) + 1
                latest[which] = max(latest.get(which, 0.0), at)
                if arrivals[which] == count:
                    print(f"{kind} {seen[kind]} {latest.pop(which)!r}", flush=True)
                    del arrivals[which]
        writer.close()

    await asyncio.gather(*(follow() for _ in range(count)))


if __name__ == "__main__":
    url, session_key, watchers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    asyncio.run(watch(url, session_key, watchers))
