"""Lark/Feishu webhook plumbing: authenticate a request, hand it to the SDK, return its answer.

lark-oapi's `EventDispatcherHandler.do()` verifies the token and signature itself, but answers
every failure (a forged signature included) with a 500, which Lark and monitoring read as
"retry later". So the request is checked here first, exactly as the SDK checks it (1.7.5:
decrypt `{"encrypt": ...}` with AES-256-CBC under sha256(encrypt_key); with an encrypt key,
`X-Lark-Signature` = sha256(timestamp + nonce + encrypt_key + body) on everything except the
url_verification challenge; the verification token when the payload carries one), and a
forgery gets a 401 before anything is dispatched. A signed request whose
`X-Lark-Request-Timestamp` is more than 5 minutes from now is refused too (a replay). The SDK then checks again and dispatches.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException
from fastapi.responses import Response
from lark_oapi import RawRequest, RawResponse
from lark_oapi.core.utils import AESCipher

TIMESTAMP = "X-Lark-Request-Timestamp"
NONCE = "X-Lark-Request-Nonce"
SIGNATURE = "X-Lark-Signature"
MAX_AGE_SECONDS = 300
"""How far a signed request's timestamp may be from now (the SDK itself never checks it)."""
FORWARDED_HEADERS = (TIMESTAMP, NONCE, SIGNATURE, "X-Request-Id", "Content-Type")
"""Headers the SDK reads, under the exact names it looks up (its header dict is case-sensitive)."""


def _denied(detail: str) -> HTTPException:
    return HTTPException(401, detail)


def _plaintext(envelope: dict[str, Any], encrypt_key: str) -> dict[str, Any]:
    sealed = envelope.get("encrypt")
    if not sealed:
        return envelope
    if not encrypt_key:
        raise _denied("the payload is encrypted but LARK_ENCRYPT_KEY is not set")
    try:
        opened = json.loads(AESCipher(encrypt_key).decrypt_str(str(sealed)))
    except ValueError as err:  # bad base64, padding, UTF-8 or JSON: not sealed with our key
        raise _denied("the payload cannot be decrypted with LARK_ENCRYPT_KEY") from err
    if not isinstance(opened, dict):
        raise _denied("the decrypted payload is not a JSON object")
    return opened


def _check_signature(body: bytes, headers: Mapping[str, str], encrypt_key: str) -> None:
    parts = [headers.get(name) for name in (TIMESTAMP, NONCE, SIGNATURE)]
    timestamp, nonce, signature = parts
    if timestamp is None or nonce is None or signature is None:
        missing = [n for n, v in zip((TIMESTAMP, NONCE, SIGNATURE), parts, strict=True) if v is None]
        raise _denied(f"missing {', '.join(missing)} header(s); Lark signs every event")
    expected = hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise _denied(f"{SIGNATURE} does not match the body (signed with another encrypt key?)")
    try:
        age = abs(time.time() - int(timestamp))
    except ValueError:
        raise _denied(f"{TIMESTAMP} {timestamp!r} is not seconds since 1970") from None
    if age > MAX_AGE_SECONDS:  # a recorded request replayed later
        raise _denied(
            f"the request was signed {age:.0f} s away from now; at most {MAX_AGE_SECONDS} s is accepted"
        )


def _token_of(payload: dict[str, Any]) -> str | None:
    header = payload.get("header")
    token = header.get("token") if isinstance(header, dict) else payload.get("token")
    return token if isinstance(token, str) else None


def authenticate(
    body: bytes, headers: Mapping[str, str], *, encrypt_key: str, verification_token: str
) -> dict[str, Any]:
    """The request's (decrypted) payload; 400 for a non-JSON body, 401 for a forged request."""
    if not verification_token:  # never accept unauthenticated events, whatever the SDK would do
        raise _denied("the Lark webhook has no LARK_VERIFICATION_TOKEN to check requests against")
    try:
        envelope = json.loads(body)
    except ValueError as err:
        raise HTTPException(400, "the body is not JSON; Lark posts JSON events") from err
    if not isinstance(envelope, dict):
        raise HTTPException(400, "the body is not a JSON object; Lark posts JSON events")
    payload = _plaintext(envelope, encrypt_key)
    challenge = payload.get("type") == "url_verification"
    if encrypt_key and not challenge:
        _check_signature(body, headers, encrypt_key)
    token = _token_of(payload)
    if (challenge or not encrypt_key or token is not None) and not hmac.compare_digest(
        (token or "").encode(), verification_token.encode()
    ):
        raise _denied("the verification token does not match LARK_VERIFICATION_TOKEN")
    return payload


def event_type(payload: dict[str, Any]) -> str | None:
    """`url_verification`, or a schema 2.0 event's `header.event_type` (None for anything else)."""
    if payload.get("type") == "url_verification":
        return "url_verification"
    header = payload.get("header")
    kind = header.get("event_type") if isinstance(header, dict) else None
    return kind if isinstance(kind, str) else None


def raw_request(path: str, body: bytes, headers: Mapping[str, str]) -> RawRequest:
    """The SDK's request object (it ships only a Flask adapter)."""
    raw = RawRequest()
    raw.uri = path
    raw.body = body
    raw.headers = {name: value for name in FORWARDED_HEADERS if (value := headers.get(name)) is not None}
    return raw


def to_response(raw: RawResponse) -> Response:
    """The SDK's answer as a FastAPI response (status, body, headers)."""
    return Response(
        content=raw.content or b"",
        status_code=raw.status_code or 200,
        headers=dict(raw.headers),
    )
