"""DingTalk webhook mode: checking that a POSTed bot message comes from DingTalk, and only once.

DingTalk signs each request to a bot's message URL with headers `timestamp` (milliseconds) and
`sign`: the Base64 of HMAC-SHA256, keyed by the app secret, of `"<timestamp>\\n<app secret>"`.
A request whose signature does not match, or whose timestamp is more than 5 minutes
(`MAX_AGE_SECONDS`) away from now, is refused with 401 before anything is done (`authenticate`).

The signature does not cover the body, so a captured pair would carry any body an attacker
likes (an admin's `确认`) for as long as it is fresh. `Webhook.admit` therefore takes each
`timestamp` + `sign` pair once, durably (`api/chat/seen.py`: across restarts and every API process
sharing the data dir, kept for days, far longer than the window): a reused pair is refused with
401. A pair is taken only once its signature checked out, so a forgery cannot burn a real one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException

from ..chat.seen import SeenEvents
from .messages import CHANNEL

MAX_AGE_SECONDS = 300
"""How far a signed request's timestamp may be from now, either way (as for Lark); used pairs are
kept far longer (`api/chat/seen.py` `KEPT_SECONDS`)."""


def signature(timestamp: str, secret: str) -> str:
    """The `sign` DingTalk sends with `timestamp`."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def authenticate(
    body: bytes, headers: Mapping[str, str], secret: str, now: float | None = None
) -> dict[str, Any]:
    """The request's JSON object; 401 for a missing, stale or forged signature, 400 for a non-JSON body.

    Stateless: a replayed pair passes here; `Webhook.admit` refuses it.
    """
    timestamp, sign = headers.get("timestamp"), headers.get("sign")
    if not timestamp or not sign:
        raise HTTPException(401, "missing the timestamp or sign header; DingTalk signs every request")
    try:
        sent = int(timestamp) / 1000
    except ValueError:
        raise HTTPException(
            401, f"the timestamp header {timestamp!r} is not milliseconds since 1970"
        ) from None
    age = abs((time.time() if now is None else now) - sent)
    if age > MAX_AGE_SECONDS:
        raise HTTPException(
            401, f"the request was signed {age:.0f} s away from now; at most {MAX_AGE_SECONDS} s is accepted"
        )
    if not hmac.compare_digest(signature(timestamp, secret), sign):
        raise HTTPException(
            401, "the sign header does not match (signed with another DINGTALK_CLIENT_SECRET?)"
        )
    try:
        payload = json.loads(body)
    except ValueError:
        raise HTTPException(400, "the body is not JSON; DingTalk posts JSON bot messages") from None
    if not isinstance(payload, dict):
        raise HTTPException(400, "the body is not a JSON object; DingTalk posts JSON bot messages")
    return payload


class Webhook:
    """Admits webhook requests: `authenticate`, then each `timestamp` + `sign` pair taken once."""

    def __init__(self, secret: str, seen: SeenEvents) -> None:
        self._secret = secret
        self._seen = seen

    async def admit(
        self, body: bytes, headers: Mapping[str, str], now: float | None = None
    ) -> dict[str, Any]:
        """The request's JSON object, as `authenticate`; 401 too when its signed pair was used before."""
        payload = authenticate(body, headers, self._secret, now)
        timestamp, sign = headers["timestamp"], headers["sign"]
        if not await self._seen.claim(CHANNEL, f"sign:{timestamp}:{sign}"):
            raise HTTPException(
                401,
                f"the timestamp and sign headers (timestamp {timestamp}) were already used by an "
                "earlier request; DingTalk's signature does not cover the body, so a reused pair is "
                "refused as a replay",
            )
        return payload
