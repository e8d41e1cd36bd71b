"""Rate limits at the door: each caller gets `SYNAPSE_RATE_LIMIT` requests a second, in bursts of
up to `SYNAPSE_RATE_BURST`; past that, 429 with `Retry-After` (off when the limit is unset).

A caller is its API key (by digest: the key itself is never kept) or, without one, its client
address, so the public routes (probes, chat webhooks) are limited per address. The limits are
per API process: behind a load balancer of N processes a caller gets up to N times the rate.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

CALLERS_KEPT = 10_000
"""Buckets remembered; the least recently seen caller is forgotten past this (it starts full)."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """A token bucket per caller: `rate` tokens a second, at most `burst`; a request takes one."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, caller: str) -> float:
        """0 when `caller` may go now (a token is taken), else the seconds until it may."""
        now = self._clock()
        bucket = self._buckets.pop(caller, None) or _Bucket(tokens=float(self.burst), at=now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self._buckets[caller] = bucket
        if len(self._buckets) > CALLERS_KEPT:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate


def caller_of(scope: Scope) -> str:
    """The API key's digest when the request carries one, else the client address."""
    authorization = dict(scope["headers"]).get(b"authorization", b"")
    if authorization.lower().startswith(b"bearer "):
        return "key:" + hashlib.sha256(authorization[7:].strip()).hexdigest()
    client = scope.get("client")
    return f"address:{client[0] if client else 'unknown'}"


class RateLimits:
    """ASGI middleware: 429 (the one error body, `Retry-After`) for a caller past its rate."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets) -> None:
        self.app, self.buckets = app, buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        wait = self.buckets.take(caller_of(scope))
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        retry_after = max(1, math.ceil(wait))
        detail = (
            f"too many requests: at most {self.buckets.rate:g} a second in bursts of {self.buckets.burst} "
            f"per caller (SYNAPSE_RATE_LIMIT, SYNAPSE_RATE_BURST); retry after {retry_after} s"
        )
        headers = {"Retry-After": str(retry_after)}
        await JSONResponse({"detail": detail}, status_code=429, headers=headers)(scope, receive, send)
