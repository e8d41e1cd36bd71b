"""Fields at rest: what Synapse's own stores keep is AES-GCM ciphertext when codec keys are set.

The artifact store, the rules' bodies and the terminal's records seal what they write with
`SYNAPSE_CODEC_KEYS` (`core.codec`: the first key seals, every key opens, so keys rotate as for
Temporal payloads) and open what they read. A sealed value names its key and says where it
belongs (`where`: its table, column and row, e.g. `approval_rules.body:rule_01H…`), which is
authenticated with it: a value copied into another column or row does not open.

Stored forms, told apart from a value written before keys were set (which reads as it is):

- bytes: `MAGIC`, one byte of key id length, the key id, then nonce and ciphertext;
- text: `TEXT_PREFIX`, the key id, `:`, then base64 of nonce and ciphertext.

Without keys a `Sealer` writes in clear, reads what is in clear, and refuses a sealed value
naming the key it would need.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

from .codec import NONCE_BYTES, CodecKey, EncryptionCodec, parse_keys

MAGIC = b"\x00synapse-sealed\x01"
"""How sealed bytes start (a NUL first: no text written in clear starts so)."""
TEXT_PREFIX = "sealed:v1:"
"""How sealed text starts."""
TAG_BYTES = 16
"""AES-GCM's tag: a sealed value is at least `NONCE_BYTES + TAG_BYTES` long."""


class Sealer:
    """Seals values for one place at rest and opens them (see the module docstring)."""

    def __init__(self, keys: Sequence[CodecKey] = ()) -> None:
        """Seal with `keys[0]`, open with any of `keys`; no keys: values stay in clear."""
        self._codec = EncryptionCodec(keys) if keys else None

    @classmethod
    def of(cls, codec_keys: str | None) -> Sealer:
        """The sealer of `SYNAPSE_CODEC_KEYS` (its text; None or empty: in clear)."""
        return cls(parse_keys(codec_keys) if codec_keys else ())

    @property
    def sealing(self) -> bool:
        """Whether new values are sealed."""
        return self._codec is not None

    def seal_bytes(self, plain: bytes, where: str) -> bytes:
        """`plain` as stored at `where` (as it is without keys)."""
        if self._codec is None:
            return plain
        key_id, sealed = self._codec.seal_bytes(plain, _context(where))
        kid = key_id.encode()
        return MAGIC + len(kid).to_bytes(1, "big") + kid + sealed

    def open_bytes(self, stored: bytes, where: str) -> bytes:
        """What `seal_bytes` stored at `where`; bytes written in clear as they are (raises
        `ValueError` naming `where` when the key is not held or the value was altered or moved)."""
        found = _sealed_bytes(stored)
        if found is None:
            return stored
        return self._open(*found, where)

    def seal_text(self, plain: str, where: str) -> str:
        """`plain` as stored at `where` (as it is without keys)."""
        if self._codec is None:
            return plain
        key_id, sealed = self._codec.seal_bytes(plain.encode(), _context(where))
        return f"{TEXT_PREFIX}{key_id}:{base64.b64encode(sealed).decode('ascii')}"

    def open_text(self, stored: str, where: str) -> str:
        """What `seal_text` stored at `where`; text written in clear as it is (raises `ValueError`
        as `open_bytes` does)."""
        found = _sealed_text(stored)
        if found is None:
            return stored
        return self._open(*found, where).decode()

    def _open(self, key_id: str, sealed: bytes, where: str) -> bytes:
        if self._codec is None:
            raise ValueError(
                f"{where} is sealed with key {key_id!r}, and SYNAPSE_CODEC_KEYS is not set "
                "(set it with that key among its keys)"
            )
        return self._codec.open_bytes(key_id, sealed, _context(where), what=where)


def _context(where: str) -> bytes:
    """The associated data of a value at `where` (after the key id the codec puts first; key ids
    hold no NUL, so no key id and place read as another)."""
    return b"\x00at-rest\x00" + where.encode()


def _sealed_bytes(stored: bytes) -> tuple[str, bytes] | None:
    """The key id and sealed bytes of a stored value, or None when it was written in clear."""
    if not stored.startswith(MAGIC) or len(stored) <= len(MAGIC):
        return None
    size = stored[len(MAGIC)]
    start = len(MAGIC) + 1 + size
    if size == 0 or len(stored) < start + NONCE_BYTES + TAG_BYTES:
        return None
    try:
        key_id = stored[len(MAGIC) + 1 : start].decode()
    except UnicodeDecodeError:
        return None
    return key_id, stored[start:]


def _sealed_text(stored: str) -> tuple[str, bytes] | None:
    """The key id and sealed bytes of stored text, or None when it was written in clear."""
    if not stored.startswith(TEXT_PREFIX):
        return None
    key_id, sep, encoded = stored[len(TEXT_PREFIX) :].partition(":")
    if not sep or not key_id:
        return None
    try:
        sealed = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return (key_id, sealed) if len(sealed) >= NONCE_BYTES + TAG_BYTES else None
