"""DingTalk webhook mode: checking that a POSTed bot message comes from DingTalk.

DingTalk signs each request to a bot's message URL with headers `timestamp` (milliseconds) and
`sign`: the Base64 of HMAC-SHA256, keyed by the app secret, of `"<timestamp>\\n<app secret>"`.
A request whose signature does not match, or whose timestamp is more than an hour away from now,
is refused with 401 before anything is done.
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

MAX_AGE_SECONDS = 3600


def signature(timestamp: str, secret: str) -> str:
    """The `sign` DingTalk sends with `timestamp`."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def authenticate(
    body: bytes, headers: Mapping[str, str], secret: str, now: float | None = None
) -> dict[str, Any]:
    """The request's JSON object; 401 for a missing, stale or forged signature, 400 for a non-JSON body."""
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
