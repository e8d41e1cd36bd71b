"""Payload encryption (pure): keys as configured, sealing and opening, rotation, refusals."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.converter import DefaultFailureConverterWithEncodedAttributes

from core.codec import ENCODING, KEY_ID, CodecKey, CodecKeyError, EncryptionCodec, parse_keys
from core.connect import synapse_converter
from core.settings import Settings, TemporalSettings


def key(size: int = 32, fill: int = 7) -> str:
    """A key of `size` bytes (fixed: test ids must be equal in every xdist worker)."""
    return base64.b64encode(bytes([fill]) * size).decode()


NEW, OLD = CodecKey("k2", os.urandom(32)), CodecKey("k1", os.urandom(16))


def test_keys_are_read_first_one_sealing() -> None:
    keys = parse_keys(f" k2:{key(32)} , k1:{key(16)},")
    assert [k.key_id for k in keys] == ["k2", "k1"] and [len(k.secret) for k in keys] == [32, 16]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "holds no key"),
        ("justakey", "entry 1 is not `<key id>:<base64 key>`"),
        (":" + key(), "entry 1 is not"),
        ("k1:not base64!", "key 'k1' is not base64"),
        (f"k1:{key(20)}", "key 'k1' is 20 bytes; AES keys are 16, 24 or 32"),
        (f"k1:{key()},k1:{key(fill=8)}", "names key 'k1' twice"),
    ],
)
def test_unreadable_keys_are_named(text: str, named: str) -> None:
    with pytest.raises(CodecKeyError) as caught:
        parse_keys(text)
    assert named in str(caught.value)


def test_settings_refuse_unreadable_keys_without_echoing_them() -> None:
    secret = key(20)
    with pytest.raises(ValidationError) as caught:
        TemporalSettings(codec_keys=f"k1:{secret}")
    assert "is 20 bytes" in str(caught.value)
    assert secret not in repr(TemporalSettings(codec_keys=f"k1:{key()}")), "keys stay out of reprs"


payloads = st.builds(
    lambda meta, data: Payload(metadata=meta, data=data),
    st.dictionaries(st.text(min_size=1, max_size=10), st.binary(max_size=20), max_size=3),
    st.binary(max_size=2000),
)


@settings(max_examples=60, deadline=None)
@given(payloads)
def test_a_sealed_payload_opens_to_itself_and_shows_nothing_of_it(payload: Payload) -> None:
    codec = EncryptionCodec([NEW, OLD])
    sealed = codec.seal(payload)

    assert sealed.metadata["encoding"] == ENCODING and sealed.metadata[KEY_ID] == b"k2"
    assert codec.open(sealed) == payload
    if len(payload.data) >= 8:
        assert payload.data not in sealed.data


def test_rotation_old_payloads_still_open_new_ones_use_the_new_key() -> None:
    before = EncryptionCodec([OLD]).seal(Payload(data=b"written last year"))
    rotated = EncryptionCodec([NEW, OLD])

    assert rotated.open(before).data == b"written last year"
    assert rotated.seal(Payload(data=b"x")).metadata[KEY_ID] == b"k2"


def test_a_payload_of_a_dropped_key_or_altered_does_not_open() -> None:
    sealed = EncryptionCodec([OLD]).seal(Payload(data=b"secret"))
    with pytest.raises(
        ValueError, match="key 'k1', which SYNAPSE_CODEC_KEYS does not hold \\(it holds k2\\)"
    ):
        EncryptionCodec([NEW]).open(sealed)
    altered = Payload(metadata=sealed.metadata, data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1]))
    with pytest.raises(ValueError, match="does not open"):
        EncryptionCodec([OLD]).open(altered)
    relabelled = Payload(metadata={**sealed.metadata, KEY_ID: b"k2"}, data=sealed.data)
    with pytest.raises(ValueError, match="does not open"):
        EncryptionCodec([NEW, CodecKey("k2", OLD.secret)]).open(relabelled)


def test_payloads_written_before_encryption_decode_as_they_are() -> None:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"')
    assert asyncio.run(EncryptionCodec([NEW]).decode([plain])) == [plain]


def test_the_converter_encrypts_payloads_and_failures_only_with_keys(tmp_path: Path) -> None:
    off = synapse_converter(Settings(data_dir=tmp_path, _env_file=None))
    keys = TemporalSettings(codec_keys=f"k1:{key()}")
    on = synapse_converter(Settings(data_dir=tmp_path, temporal=keys, _env_file=None))

    assert off.payload_codec is None
    assert isinstance(on.payload_codec, EncryptionCodec)
    assert on.failure_converter_class is DefaultFailureConverterWithEncodedAttributes
