"""`settings.artifacts`: where artifacts (and claim-checked Temporal payloads) are kept."""

from __future__ import annotations

from pydantic import Field

from .group import Group, env


class ArtifactSettings(Group):
    """Where artifacts (and claim-checked Temporal payloads) are kept."""

    url: str | None = Field(
        default=None,
        pattern=r"^s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/.*)?$",
        validation_alias=env("url", "SYNAPSE_ARTIFACTS_URL"),
        description="`s3://bucket/prefix` to keep artifacts in an S3-compatible bucket (every worker "
        "and API process must share it); unset: `<data_dir>/artifacts.db` on this machine.",
    )
    s3_endpoint_url: str | None = Field(
        default=None,
        validation_alias=env("s3_endpoint_url", "SYNAPSE_S3_ENDPOINT_URL"),
        description="Endpoint of a non-AWS S3-compatible service (MinIO, Ceph, R2, ...).",
    )
    s3_region: str | None = Field(
        default=None,
        validation_alias=env("s3_region", "SYNAPSE_S3_REGION"),
        description="The bucket's region (else boto3's default: AWS_REGION / the AWS config).",
    )
