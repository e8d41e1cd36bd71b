"""`python -m bench.watchers BASE_URL KEY N`: N SSE clients of one session, in a process of their own.

People watching a session sit at their own machines: their reading and parsing is not the API's
work. So the crowded stream benchmark runs its watchers here, not beside the API and the worker.
Prints `ready` once every connection is answered, then, whenever the last of the N has received the
k-th chunk of a kind, `<kind> <k> <time>`: `time.perf_counter()` of that last arrival
(CLOCK_MONOTONIC, one clock for every process of this machine, so the benchmark can compare it with
its own). Ends when the streams end or the benchmark stops it.
"""

from __future__ import annotations

import asyncio
import sys
import time

import httpx

PREFIX = "event: "


async def watch(base_url: str, key: str, count: int) -> None:
    """Follow the session on `count` connections; print as the module says."""
    opened = 0
    arrivals: dict[tuple[str, int], int] = {}
    latest: dict[tuple[str, int], float] = {}

    async def follow(http: httpx.AsyncClient) -> None:
        nonlocal opened
        seen: dict[str, int] = {}
        async with http.stream("GET", f"/sessions/{key}/events", timeout=None) as reply:
            reply.raise_for_status()
            opened += 1
            if opened == count:
                print("ready", flush=True)
            async for line in reply.aiter_lines():
                if not line.startswith(PREFIX):
                    continue
                at = time.perf_counter()
                kind = line[len(PREFIX) :]
                seen[kind] = seen.get(kind, 0) + 1
                which = (kind, seen[kind])
                arrivals[which] = arrivals.get(which, 0) + 1
                latest[which] = max(latest.get(which, 0.0), at)
                if arrivals[which] == count:
                    print(f"{kind} {seen[kind]} {latest.pop(which)!r}", flush=True)
                    del arrivals[which]

    limits = httpx.Limits(max_connections=count + 1, max_keepalive_connections=count + 1)
    async with httpx.AsyncClient(base_url=base_url, limits=limits) as http:
        await asyncio.gather(*(follow(http) for _ in range(count)))


if __name__ == "__main__":
    url, session_key, watchers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    asyncio.run(watch(url, session_key, watchers))
