"""The codec server's JSON: payloads as the Temporal Web UI sends them to be decoded or encoded."""

from __future__ import annotations

from pydantic import Field

from .base import Contract


class CodecPayload(Contract):
    """One payload in the protobuf JSON form: bytes as standard base64."""

    metadata: dict[str, str] = Field(
        default_factory=dict, description="Metadata values, base64 (`encoding`, `encryption-key-id`, ...)."
    )
    data: str = Field(default="", description="The payload's bytes, base64.")


class CodecPayloads(Contract):
    """A batch of payloads, in and out of `POST /codec/decode` and `/codec/encode`."""

    payloads: list[CodecPayload] = Field(default_factory=list, max_length=10_000)
