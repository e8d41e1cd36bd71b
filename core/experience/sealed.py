"""The experience index at rest under `SYNAPSE_CODEC_KEYS`: sealed text and a blind index of words.

With codec keys set, neither backend stores a question or an answer in clear:

- each is AES-GCM ciphertext (`core.codec.EncryptionCodec.seal_bytes`, the first key), base64
  text in its column, the row's `key_id` naming the key; the record's owner, turn and field are
  authenticated with it, so a sealed text opens only in the row and field it was written to;
- its words are kept as keyed hashes, a blind index: HMAC-SHA256 of each normalised word (NFKC,
  case-folded, split as `query.words_of` splits) under a key derived from the codec key (HKDF,
  `INDEX_INFO`), cut to `TOKEN_BYTES`. A search hashes its words the same way under every key,
  so rows written under a key since rotated out of first place are still found.

What is lost against the plain index: only whole words match (no part of a word, no word
inside unspaced Chinese text, no prefix, no fuzzy match), and ranking counts the query's words
a record holds (newer first among equals) instead of bm25. Someone who reads the store learns
which records share a word and how many distinct words each holds, never the words.

The one place that seals for the experience index: a shared at-rest helper can replace it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import unicodedata
from collections.abc import Sequence
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from contracts import ExperienceMatch

from ..codec import CodecKey, EncryptionCodec, parse_keys
from .query import COLUMNS, words_of

INDEX_INFO = b"synapse-experience-index"
"""HKDF's info: the word-hashing key of each codec key is its own, never the encrypting key."""
TOKEN_BYTES = 16
"""Kept of each word's HMAC (128 bits: no two words of a deployment share one)."""
MAX_QUERY_WORDS = 200
"""Words of a query looked up (the first ones): a long message recalled by an agent stays one
bounded statement, whatever the number of keys."""
_QUESTION, _ANSWER, _OWNER, _TURN = (
    COLUMNS.index(name) for name in ("question", "answer", "owner_id", "turn")
)


def normalised_words(text: str) -> list[str]:
    """The words of `text` as the blind index keeps them: NFKC, case-folded, each once."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return words_of(folded)


def _context(owner_id: str, turn: int, field: str) -> bytes:
    """What a sealed field is bound to: its record and its column."""
    return f"experience\x00{owner_id}\x00{turn}\x00{field}".encode()


class ExperienceSealer:
    """Seals recorded text and hashes words with the codec keys (the first seals and hashes new
    records; every key opens and searches)."""

    def __init__(self, keys: Sequence[CodecKey]) -> None:
        self._codec = EncryptionCodec(keys)
        self._word_keys = {
            key.key_id: HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=INDEX_INFO).derive(
                key.secret
            )
            for key in keys
        }

    @property
    def key_id(self) -> str:
        """The id of the key new records are sealed and hashed with."""
        return self._codec.key_id

    def seal(self, text: str, owner_id: str, turn: int, field: str) -> str:
        """`text` as stored in `field` of record (`owner_id`, `turn`): base64 of nonce and ciphertext."""
        _, sealed = self._codec.seal_bytes(text.encode(), _context(owner_id, turn, field))
        return base64.b64encode(sealed).decode("ascii")

    def open(self, key_id: str, stored: str, owner_id: str, turn: int, field: str) -> str:
        """What `seal` stored (raises `ValueError` when the key is not held or the text was altered)."""
        plain = self._codec.open_bytes(
            key_id,
            base64.b64decode(stored),
            _context(owner_id, turn, field),
            what=f"experience {field} of {owner_id} turn {turn}",
        )
        return plain.decode()

    def _token(self, key: bytes, word: str) -> bytes:
        return hmac.new(key, word.encode(), hashlib.sha256).digest()[:TOKEN_BYTES]

    def tokens(self, *texts: str) -> list[bytes]:
        """The blind index entries of a new record's texts (the first key's), each once."""
        key = self._word_keys[self.key_id]
        words = dict.fromkeys(word for text in texts for word in normalised_words(text))
        return [self._token(key, word) for word in words]

    def query_tokens(self, query: str) -> list[bytes]:
        """The query's words (its first `MAX_QUERY_WORDS`) hashed under every key: a record hashed
        under any of them matches."""
        words = normalised_words(query)[:MAX_QUERY_WORDS]
        return [self._token(key, word) for key in self._word_keys.values() for word in words]

    def match(self, row: Any, score: float) -> ExperienceMatch:
        """A result from a row of `COLUMNS` followed by its `key_id`, its fields opened."""
        values = list(tuple(row)[: len(COLUMNS)])
        key_id, owner_id, turn = row[len(COLUMNS)], values[_OWNER], values[_TURN]
        for index, field in ((_QUESTION, "question"), (_ANSWER, "answer")):
            values[index] = self.open(key_id, values[index], owner_id, turn, field)
        return ExperienceMatch(**dict(zip(COLUMNS, values, strict=True)), score=score)


def sealer_of(codec_keys: str | None) -> ExperienceSealer | None:
    """The sealer of `SYNAPSE_CODEC_KEYS` (None when unset: the index keeps text in clear)."""
    return ExperienceSealer(parse_keys(codec_keys)) if codec_keys else None
