"""`settings.limits`: how big things may be: at the door, inline in history, and out of it."""

from __future__ import annotations

from pydantic import Field

from .group import Group, env

KIB = 1024
MIB = 1024 * KIB


MAX_JSON_DEPTH_CEILING = 128
"""Highest `SYNAPSE_MAX_JSON_DEPTH`: far below the 200 levels pydantic's JSON parser reads (the
worker's payloads), leaving room for the models a value is carried in (`core/nesting.py`)."""


class LimitSettings(Group):
    """How big things may be: at the door (413 above), inline in history, and out of it."""

    max_request_bytes: int = Field(
        default=1 * MIB,
        gt=0,
        validation_alias=env("max_request_bytes", "SYNAPSE_MAX_REQUEST_BYTES"),
        description="Largest request body the API reads (except artifact uploads); 413 above it.",
    )
    max_message_bytes: int = Field(
        default=64 * KIB,
        gt=0,
        validation_alias=env("max_message_bytes", "SYNAPSE_MAX_MESSAGE_BYTES"),
        description="Largest message (UTF-8 bytes of its content), over HTTP or chat; larger text "
        "goes in an artifact (`POST /artifacts`).",
    )
    max_comment_bytes: int = Field(
        default=4 * KIB,
        gt=0,
        validation_alias=env("max_comment_bytes", "SYNAPSE_MAX_COMMENT_BYTES"),
        description="Largest decision comment or intervention reason.",
    )
    max_blueprint_bytes: int = Field(
        default=256 * KIB,
        gt=0,
        validation_alias=env("max_blueprint_bytes", "SYNAPSE_MAX_BLUEPRINT_BYTES"),
        description="Largest task graph (PlanBlueprint as JSON) an agent may propose.",
    )
    max_json_depth: int = Field(
        default=64,
        ge=8,
        le=MAX_JSON_DEPTH_CEILING,
        validation_alias=env("max_json_depth", "SYNAPSE_MAX_JSON_DEPTH"),
        description="How deeply a request body's JSON may nest (the body itself is level 1); 422 "
        "naming the path above it. Agents' answers and tools' results nested deeper are cut there. "
        f"At most {MAX_JSON_DEPTH_CEILING}: Temporal payloads are read back only to 200 levels.",
    )
    max_artifact_bytes: int = Field(
        default=50 * MIB,
        gt=0,
        validation_alias=env("max_artifact_bytes", "SYNAPSE_MAX_ARTIFACT_BYTES"),
        description="Largest artifact upload (`POST /artifacts`).",
    )
    inline_bytes: int = Field(
        default=16 * KIB,
        gt=0,
        validation_alias=env("inline_bytes", "SYNAPSE_INLINE_BYTES"),
        description="A tool result or agent answer larger than this (as JSON) is stored as an "
        "artifact; history, the stream and the agent get a preview of about this size and its id.",
    )
    claim_check_bytes: int = Field(
        default=256 * KIB,
        gt=0,
        validation_alias=env("claim_check_bytes", "SYNAPSE_CLAIM_CHECK_BYTES"),
        description="Any Temporal payload at least this big is kept in the artifact store and "
        "only referenced in history (the SDK's external storage); the safety net under the limits.",
    )
