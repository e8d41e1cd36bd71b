"""The codec server: the Temporal Web UI sends stored payloads here to read them in clear.

Mounted only when payload encryption is on (SYNAPSE_CODEC_KEYS; `core/codec.py`). `POST
/codec/decode` opens encrypted payloads (viewer role), `POST /codec/encode` seals payloads the UI
sends (operator role), both in the UI's JSON contract (`{"payloads": [{"metadata": {...},
"data": "..."}]}`, bytes as base64). The UI names its namespace in `X-Namespace`; a namespace
other than the API's is refused. The UI's origin (SYNAPSE_CODEC_ORIGINS; the embedded UI's by
default) may call these routes from the browser (CORS).

Payloads carry no project, so the codec server would open any team's: a key scoped to projects
may not use it (403 saying so); the Temporal UI's operators use an unscoped key.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Request
from temporalio.api.common.v1 import Payload

from contracts import CodecPayload, CodecPayloads
from core.codec import EncryptionCodec
from core.security import Caller

from ..deps import ClientDep, Operator, Viewer
from ..errors import ERROR_RESPONSES

router = APIRouter(prefix="/codec", tags=["codec"])

Namespace = Annotated[str | None, Header(alias="X-Namespace", description="The UI's namespace.")]


def _payload(index: int, wire: CodecPayload) -> Payload:
    try:
        metadata = {key: base64.b64decode(value, validate=True) for key, value in wire.metadata.items()}
        data = base64.b64decode(wire.data, validate=True)
    except (binascii.Error, ValueError):
        raise HTTPException(
            400, f"payloads[{index}]: metadata values and data must be standard base64"
        ) from None
    return Payload(metadata=metadata, data=data)


def _wire(payload: Payload) -> CodecPayload:
    return CodecPayload(
        metadata={key: base64.b64encode(value).decode() for key, value in payload.metadata.items()},
        data=base64.b64encode(payload.data).decode(),
    )


SCOPED = (
    "the key of {who} is scoped to projects ({projects}), and payloads carry no project: the codec "
    "server would open any project's, so it needs a key without projects (the Temporal UI's operators')"
)
"""Why a scoped key may not use the codec server (its 403)."""


def _codec(request: Request, client: ClientDep, caller: Caller, namespace: str | None) -> EncryptionCodec:
    if caller.projects is not None:
        raise HTTPException(
            403, SCOPED.format(who=caller.principal, projects=", ".join(sorted(caller.projects)))
        )
    if namespace is not None and namespace != client.namespace:
        raise HTTPException(
            400, f"X-Namespace is {namespace!r}; this codec server serves namespace {client.namespace!r}"
        )
    codec: EncryptionCodec = request.app.state.codec
    return codec


RESPONSES = ERROR_RESPONSES(
    400, 401, 403, s403="The role is too low, or the key is scoped to projects (payloads carry none)."
)


@router.post("/decode", response_model=CodecPayloads, responses=RESPONSES)
async def decode(
    body: CodecPayloads, request: Request, client: ClientDep, caller: Viewer, namespace: Namespace = None
) -> CodecPayloads:
    """Open encrypted payloads (others come back as they are); 400 names one that does not open."""
    codec = _codec(request, client, caller, namespace)
    opened = []
    for index, wire in enumerate(body.payloads):
        try:
            opened.append(_wire(codec.open(_payload(index, wire))))
        except ValueError as err:
            raise HTTPException(400, f"payloads[{index}]: {err}") from None
    return CodecPayloads(payloads=opened)


@router.post("/encode", response_model=CodecPayloads, responses=RESPONSES)
async def encode(
    body: CodecPayloads, request: Request, client: ClientDep, caller: Operator, namespace: Namespace = None
) -> CodecPayloads:
    """Seal payloads with the first of SYNAPSE_CODEC_KEYS."""
    codec = _codec(request, client, caller, namespace)
    return CodecPayloads(
        payloads=[_wire(codec.seal(_payload(i, wire))) for i, wire in enumerate(body.payloads)]
    )
