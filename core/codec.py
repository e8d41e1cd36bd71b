"""Payload encryption: every payload Synapse stores in Temporal is AES-GCM ciphertext when keys are set.

`SYNAPSE_CODEC_KEYS="kid1:<base64 key>,kid2:<base64 key>"`: the first key encrypts, every key
decrypts, so keys rotate by putting a new one first and dropping an old one once no open
workflow's history needs it. Keys are 16, 24 or 32 bytes (AES-128/192/256).

An encrypted payload has metadata `encoding: binary/encrypted` and `encryption-key-id: <kid>`;
its data is a 12-byte nonce followed by the AES-GCM ciphertext (with its tag) of the original
payload, serialized. The key id is authenticated as associated data, so a payload cannot be
passed off as sealed with another key. Payloads not encrypted (written before keys were set)
decode as they are. Every client and worker of a deployment needs the same keys; the Web UI
reads payloads through the API's codec server (`api/routes/codec.py`).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"
NONCE_BYTES = 12
KEY_SIZES = (16, 24, 32)


class CodecKeyError(ValueError):
    """SYNAPSE_CODEC_KEYS cannot be read; the message says which entry and why."""


@dataclass(frozen=True)
class CodecKey:
    """One key: its id (in every payload it seals) and its bytes."""

    key_id: str
    secret: bytes


def parse_keys(text: str) -> list[CodecKey]:
    """`kid1:base64,kid2:base64` as keys, first the one that encrypts (raises `CodecKeyError`)."""
    keys: list[CodecKey] = []
    for position, entry in enumerate((e.strip() for e in text.split(",")), start=1):
        if not entry:
            continue
        key_id, sep, encoded = entry.partition(":")
        if not sep or not key_id.strip():
            raise CodecKeyError(f"SYNAPSE_CODEC_KEYS entry {position} is not `<key id>:<base64 key>`")
        try:
            secret = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise CodecKeyError(f"SYNAPSE_CODEC_KEYS key {key_id.strip()!r} is not base64") from None
        if len(secret) not in KEY_SIZES:
            raise CodecKeyError(
                f"SYNAPSE_CODEC_KEYS key {key_id.strip()!r} is {len(secret)} bytes; AES keys are 16, 24 or 32 "
                "(make one with `python -c 'import os,base64;print(base64.b64encode(os.urandom(32)).decode())'`)"
            )
        if any(k.key_id == key_id.strip() for k in keys):
            raise CodecKeyError(f"SYNAPSE_CODEC_KEYS names key {key_id.strip()!r} twice")
        keys.append(CodecKey(key_id.strip(), secret))
    if not keys:
        raise CodecKeyError("SYNAPSE_CODEC_KEYS is set but holds no key")
    return keys


class EncryptionCodec(PayloadCodec):
    """AES-GCM over whole payloads: the first key seals, any key opens."""

    def __init__(self, keys: Sequence[CodecKey]) -> None:
        if not keys:
            raise CodecKeyError("an encryption codec needs at least one key")
        self._sealing = keys[0]
        self._ciphers = {key.key_id: AESGCM(key.secret) for key in keys}

    @property
    def key_id(self) -> str:
        """The id of the key that encrypts."""
        return self._sealing.key_id

    def seal_bytes(self, plain: bytes, context: bytes = b"") -> tuple[str, bytes]:
        """`plain` encrypted with the first key: its key id, and the nonce followed by the
        ciphertext. The key id and `context` (what the bytes are, for a store sealing fields at
        rest) are authenticated, so the bytes open only as what they were sealed as."""
        nonce = os.urandom(NONCE_BYTES)
        key_id = self._sealing.key_id
        return key_id, nonce + self._ciphers[key_id].encrypt(nonce, plain, key_id.encode() + context)

    def open_bytes(self, key_id: str, sealed: bytes, context: bytes = b"", *, what: str = "payload") -> bytes:
        """What `seal_bytes` sealed with key `key_id` and `context` (raises `ValueError` naming
        `what` when the key is not held, or the bytes were altered or sealed as something else)."""
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise ValueError(
                f"{what} encrypted with key {key_id!r}, which SYNAPSE_CODEC_KEYS does not hold "
                f"(it holds {', '.join(sorted(self._ciphers))})"
            )
        try:
            return cipher.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], key_id.encode() + context)
        except InvalidTag:
            raise ValueError(
                f"{what} sealed with key {key_id!r} does not open: altered or not ours"
            ) from None

    def seal(self, payload: Payload) -> Payload:
        """One payload, encrypted with the first key."""
        key_id, sealed = self.seal_bytes(payload.SerializeToString())
        return Payload(metadata={"encoding": ENCODING, KEY_ID: key_id.encode()}, data=sealed)

    def open(self, payload: Payload) -> Payload:
        """One payload, decrypted (returned as it is when it is not encrypted)."""
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID, b"").decode(errors="replace")
        return Payload.FromString(self.open_bytes(key_id, payload.data))

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Encrypt every payload."""
        return [self.seal(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """Decrypt every encrypted payload."""
        return [self.open(payload) for payload in payloads]
