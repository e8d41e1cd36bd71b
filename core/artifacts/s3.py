"""Artifacts in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...): for deployments whose
workers and API run on more than one machine.

`SYNAPSE_ARTIFACTS_URL=s3://bucket/prefix` chooses it; `SYNAPSE_S3_ENDPOINT_URL` points at a
non-AWS service and `SYNAPSE_S3_REGION` names the region. Credentials come the standard AWS way
(`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, an instance role, ...) through
boto3. Each artifact is one object, `<prefix><artifact id>`, with its media type as the object's
`Content-Type` and its name, owner, creation time and size as user metadata (percent-encoded: S3
metadata is ASCII; the size is the content's, which a sealed body exceeds). The claim check of
Temporal payloads (`claim_check.py`) lands here too, so one bucket holds everything a deployment
keeps out of history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from contracts import ArtifactInfo

from ..settings import ArtifactSettings
from .store import ArtifactStorageUnavailable

NOT_FOUND_CODES = ("404", "NoSuchKey", "NotFound")


class S3Blobs:
    """The `Blobs` of a bucket and key prefix."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        """`client` is a boto3 S3 client."""
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    @classmethod
    def from_settings(cls, artifacts: ArtifactSettings) -> S3Blobs:
        """The bucket of `artifacts.url` (`s3://bucket/prefix`), through a boto3 client."""
        import boto3  # only deployments that use a bucket pay for the import

        assert artifacts.url is not None, "no SYNAPSE_ARTIFACTS_URL"
        parts = urlsplit(artifacts.url)
        prefix = parts.path.lstrip("/")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        client = boto3.client("s3", endpoint_url=artifacts.s3_endpoint_url, region_name=artifacts.s3_region)
        return cls(client, parts.netloc, prefix)

    @property
    def location(self) -> str:
        """`s3://bucket/prefix`, for messages."""
        return f"s3://{self.bucket}/{self.prefix}"

    def write(self, info: ArtifactInfo, content: bytes) -> None:
        """Put the object unless it exists (the first name and owner stay, as in the local store)."""
        if self.info(info.artifact_id) is not None:
            return
        metadata = {"created-at": info.created_at.isoformat(), "size-bytes": str(info.size_bytes)}
        if info.name is not None:
            metadata["name"] = quote(info.name, safe="")
        if info.owner_id is not None:
            metadata["owner-id"] = quote(info.owner_id, safe="")
        self._call(
            "put_object",
            Bucket=self.bucket,
            Key=self._key(info.artifact_id),
            Body=content,
            ContentType=info.media_type,
            Metadata=metadata,
        )

    def info(self, artifact_id: str) -> ArtifactInfo | None:
        """The object's metadata (a HEAD request)."""
        head = self._call("head_object", Bucket=self.bucket, Key=self._key(artifact_id))
        return None if head is None else _info(artifact_id, head, head["ContentLength"])

    def read(self, artifact_id: str) -> tuple[ArtifactInfo, bytes] | None:
        """The object's metadata and content (a GET request)."""
        got = self._call("get_object", Bucket=self.bucket, Key=self._key(artifact_id))
        if got is None:
            return None
        content: bytes = got["Body"].read()
        return _info(artifact_id, got, len(content)), content

    def _key(self, artifact_id: str) -> str:
        return f"{self.prefix}{artifact_id}"

    def _call(self, operation: str, **arguments: Any) -> Any:
        """Run one S3 operation: None when the object does not exist; other failures say where."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(**arguments)
        except ClientError as err:
            code = str(err.response.get("Error", {}).get("Code", ""))
            if code in NOT_FOUND_CODES:
                return None
            raise ArtifactStorageUnavailable(
                f"artifact storage {self.location}: {operation} failed: {err}"
            ) from err
        except BotoCoreError as err:
            raise ArtifactStorageUnavailable(
                f"artifact storage {self.location}: {operation} failed: {err}"
            ) from err


def _info(artifact_id: str, response: dict[str, Any], size: int) -> ArtifactInfo:
    metadata = response.get("Metadata", {})
    name, owner_id = metadata.get("name"), metadata.get("owner-id")
    created_at, size_bytes = metadata.get("created-at"), metadata.get("size-bytes")
    return ArtifactInfo(
        artifact_id=artifact_id,
        media_type=response.get("ContentType") or "application/octet-stream",
        size_bytes=int(size_bytes) if size_bytes and size_bytes.isdigit() else size,
        name=None if name is None else unquote(name),
        owner_id=None if owner_id is None else unquote(owner_id),
        created_at=datetime.fromisoformat(created_at) if created_at else response["LastModified"],
    )
