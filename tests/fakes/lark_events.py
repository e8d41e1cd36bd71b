"""What Lark/Feishu POSTs to an app: event and card-callback payloads, encrypted and signed.

Payloads follow the documented shapes (schema 2.0): `im.message.receive_v1` events,
`card.action.trigger` callbacks and the `url_verification` challenge. Encryption and the
signature match what lark-oapi 1.7.5 checks (`EventDispatcherHandler._decrypt` / `_verify_sign`):
AES-256-CBC with key sha256(encrypt_key), a random 16-byte IV in front, PKCS7 padding, base64,
sent as `{"encrypt": "..."}`; `X-Lark-Signature` = sha256(timestamp + nonce + encrypt_key + body).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from Crypto.Cipher import AES

BOT_OPEN_ID = "ou_bot_synapse"
"""The open_id the tests give the Synapse bot in mentions."""


def encrypt(payload: dict[str, Any], encrypt_key: str) -> dict[str, str]:
    """`{"encrypt": ...}` as Lark sends it when the app has an encrypt key."""
    plain = json.dumps(payload, ensure_ascii=False).encode()
    pad = AES.block_size - len(plain) % AES.block_size
    iv = os.urandom(AES.block_size)
    cipher = AES.new(hashlib.sha256(encrypt_key.encode()).digest(), AES.MODE_CBC, iv)
    sealed = iv + cipher.encrypt(plain + bytes([pad]) * pad)
    return {"encrypt": base64.b64encode(sealed).decode()}


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """The `X-Lark-Signature` of a request body."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode() + body).hexdigest()


def signed_headers(body: bytes, encrypt_key: str, *, at: float | None = None) -> dict[str, str]:
    """The headers Lark adds to every event and callback request (signed now, or `at`)."""
    timestamp, nonce = str(int(time.time() if at is None else at)), uuid.uuid4().hex[:16]
    return {
        "Content-Type": "application/json; charset=utf-8",
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature(timestamp, nonce, encrypt_key, body),
    }


def text_content(text: str) -> str:
    """`message.content` of a text message: a JSON string."""
    return json.dumps({"text": text}, ensure_ascii=False)


def mention(key: str, open_id: str, name: str) -> dict[str, Any]:
    """One entry of `message.mentions` (`key` is the `@_user_N` placeholder in the text)."""
    return {
        "key": key,
        "id": {"open_id": open_id, "union_id": f"on_{open_id}", "user_id": ""},
        "name": name,
        "tenant_key": "tenant_test",
    }


@dataclass
class LarkEvents:
    """Builds what one Lark app (its token and encrypt key) sends to the webhook."""

    verification_token: str
    encrypt_key: str | None
    app_id: str = "cli_test_synapse"
    tenant_key: str = "tenant_test"

    def envelope(self, event_type: str, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        """A schema 2.0 event around `event`."""
        return {
            "schema": "2.0",
            "header": {
                "event_id": event_id or uuid.uuid4().hex,
                "token": self.verification_token,
                "create_time": str(int(time.time() * 1000)),
                "event_type": event_type,
                "tenant_key": self.tenant_key,
                "app_id": self.app_id,
            },
            "event": event,
        }

    def url_verification(self, challenge: str) -> dict[str, Any]:
        """The challenge Lark sends when the request URL is saved in the console."""
        return {"challenge": challenge, "token": self.verification_token, "type": "url_verification"}

    def message(
        self,
        *,
        chat_id: str,
        sender: str,
        content: str,
        message_type: str = "text",
        chat_type: str = "p2p",
        mentions: list[dict[str, Any]] | None = None,
        thread_id: str | None = None,
        message_id: str | None = None,
        event_id: str | None = None,
        sender_type: str = "user",
    ) -> dict[str, Any]:
        """An `im.message.receive_v1` event; `content` is the raw JSON string of the message."""
        message: dict[str, Any] = {
            "message_id": message_id or f"om_{uuid.uuid4().hex}",
            "chat_id": chat_id,
            "chat_type": chat_type,
            "message_type": message_type,
            "content": content,
            "create_time": str(int(time.time() * 1000)),
            "update_time": str(int(time.time() * 1000)),
        }
        if mentions:
            message["mentions"] = mentions
        if thread_id:
            message["thread_id"] = thread_id
            message["root_id"] = f"om_root_{thread_id}"
        sender_block = {
            "sender_id": {"open_id": sender, "union_id": f"on_{sender}", "user_id": f"u_{sender}"},
            "sender_type": sender_type,
            "tenant_key": self.tenant_key,
        }
        return self.envelope(
            "im.message.receive_v1", {"sender": sender_block, "message": message}, event_id=event_id
        )

    def text(self, chat_id: str, sender: str, text: str, **options: Any) -> dict[str, Any]:
        """A text message event (`options` as for `message`)."""
        return self.message(chat_id=chat_id, sender=sender, content=text_content(text), **options)

    def card_action(
        self,
        *,
        operator: str,
        value: dict[str, Any],
        chat_id: str,
        message_id: str | None = None,
        event_id: str | None = None,
    ) -> dict[str, Any]:
        """A `card.action.trigger` callback: `operator` clicked a button whose value is `value`."""
        event = {
            "operator": {
                "tenant_key": self.tenant_key,
                "user_id": f"u_{operator}",
                "open_id": operator,
                "union_id": f"on_{operator}",
            },
            "token": f"c-{uuid.uuid4().hex}",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": message_id or f"om_{uuid.uuid4().hex}", "open_chat_id": chat_id},
        }
        return self.envelope("card.action.trigger", event, event_id=event_id)

    def request(self, payload: dict[str, Any], *, encrypted: bool = True) -> tuple[bytes, dict[str, str]]:
        """Body and headers of the POST Lark makes: encrypted (when a key is set) and signed."""
        sealed = encrypt(payload, self.encrypt_key) if encrypted and self.encrypt_key else payload
        body = json.dumps(sealed, ensure_ascii=False).encode()
        if self.encrypt_key is None:
            return body, {"Content-Type": "application/json; charset=utf-8"}
        return body, signed_headers(body, self.encrypt_key)
