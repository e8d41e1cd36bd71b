"""Fields at rest (pure): sealed with the first codec key, opened with any, bound to their place;
values written in clear still read; a sealed value without its key is refused, saying which."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.at_rest import MAGIC, TEXT_PREFIX, Sealer
from core.codec import CodecKey

NEW, OLD = CodecKey("k2", os.urandom(32)), CodecKey("k1", os.urandom(16))
SEALER = Sealer([NEW])
WHERE = "approval_rules.body:rule_1"


@settings(max_examples=60, deadline=None)  # a loaded machine is slow, not wrong
@given(st.binary(max_size=2000))
def test_bytes_open_as_they_were_sealed_and_hold_nothing_of_them(plain: bytes) -> None:
    stored = SEALER.seal_bytes(plain, WHERE)
    assert stored.startswith(MAGIC) and SEALER.open_bytes(stored, WHERE) == plain
    if len(plain) >= 8:  # the ciphertext after the header (`MAGIC`, length, key id)
        assert plain not in stored[len(MAGIC) + 1 + len(b"k2") :]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=500))
def test_text_opens_as_it_was_sealed(plain: str) -> None:
    stored = SEALER.seal_text(plain, WHERE)
    assert stored.startswith(f"{TEXT_PREFIX}k2:") and stored.isascii()
    assert SEALER.open_text(stored, WHERE) == plain


def test_the_same_value_is_sealed_differently_each_time() -> None:
    assert SEALER.seal_text("rm -rf /srv", WHERE) != SEALER.seal_text("rm -rf /srv", WHERE)


def test_after_rotation_values_sealed_under_the_old_key_still_open() -> None:
    before = Sealer([OLD])
    stored_text, stored_bytes = before.seal_text("old reason", WHERE), before.seal_bytes(b"old page", WHERE)
    rotated = Sealer([NEW, OLD])

    assert rotated.open_text(stored_text, WHERE) == "old reason"
    assert rotated.open_bytes(stored_bytes, WHERE) == b"old page"
    assert rotated.seal_text("new", WHERE).startswith(f"{TEXT_PREFIX}k2:"), "the first key seals"


@pytest.mark.parametrize(
    ("opener", "where", "refusal"),
    [
        (Sealer([NEW]), WHERE, "sealed with key 'k1' does not open|encrypted with key 'k1', which"),
        (Sealer([OLD]), "approval_rules.body:rule_2", "approval_rules.body:rule_2 sealed with key 'k1'"),
        (Sealer([OLD]), "terminal_runs.command:rule_1", "terminal_runs.command:rule_1 sealed with key"),
        (Sealer(), WHERE, f"{WHERE} is sealed with key 'k1', and SYNAPSE_CODEC_KEYS is not set"),
    ],
    ids=["key dropped", "moved to another row", "moved to another column", "no keys"],
)
def test_a_value_that_cannot_be_opened_is_refused_naming_its_place_and_key(
    opener: Sealer, where: str, refusal: str
) -> None:
    stored = Sealer([OLD]).seal_text("a reason", WHERE)
    with pytest.raises(ValueError, match=refusal):
        opener.open_text(stored, where)
    with pytest.raises(ValueError, match=refusal):
        opener.open_bytes(Sealer([OLD]).seal_bytes(b"a page", WHERE), where)


def test_an_altered_value_is_refused() -> None:
    stored = bytearray(SEALER.seal_bytes(b"a page of output", WHERE))
    stored[-1] ^= 1
    with pytest.raises(ValueError, match="does not open: altered or not ours"):
        SEALER.open_bytes(bytes(stored), WHERE)


@pytest.mark.parametrize(
    "clear",
    [
        '{"tool": "sql", "reason": "nightly report"}',
        "sealed:v1:",
        "sealed:v1:k2",
        "sealed:v1:k2:not base64!",
        "sealed:v1:k2:c2hvcnQ=",
        "",
    ],
)
def test_text_written_before_keys_were_set_reads_as_it_is(clear: str) -> None:
    assert SEALER.open_text(clear, WHERE) == clear
    assert Sealer().open_text(clear, WHERE) == clear


@pytest.mark.parametrize(
    "clear", [b"", b"plain output\n", MAGIC, MAGIC + b"\x00abc", MAGIC + b"\x02k2" + b"x" * 8]
)
def test_bytes_written_before_keys_were_set_read_as_they_are(clear: bytes) -> None:
    assert SEALER.open_bytes(clear, WHERE) == clear


def test_without_keys_values_stay_in_clear() -> None:
    clear = Sealer.of(None)
    assert not clear.sealing and Sealer.of(f"k1:{'A' * 43}=").sealing
    assert clear.seal_text("select 1", WHERE) == "select 1"
    assert clear.seal_bytes(b"select 1", WHERE) == b"select 1"
