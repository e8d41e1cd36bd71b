"""A loopback S3 for tests: moto's S3 server (an implementation of the S3 REST API) on 127.0.0.1.

Object storage lives outside this machine in production; here boto3, the real SDK, talks HTTP to
this stand-in, so the artifact store's S3 backend runs exactly as it would against AWS or MinIO.

    with s3_bucket() as bucket:
        settings = Settings(artifacts=bucket.settings("runs/"), ...)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from core.settings import ArtifactSettings

REGION = "us-east-1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": REGION}
"""What boto3 needs in the environment to sign requests (any values work against the stand-in)."""


@dataclass
class FakeBucket:
    """One bucket on the loopback server."""

    endpoint_url: str
    name: str

    def settings(self, prefix: str = "") -> ArtifactSettings:
        """Artifact settings that point Synapse at this bucket."""
        return ArtifactSettings(url=f"s3://{self.name}/{prefix}", s3_endpoint_url=self.endpoint_url)

    def client(self) -> Any:
        """A boto3 client of the server (to look at what was stored, as an operator would)."""
        import boto3  # here, not at the top: every parallel test worker imports this module

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name=REGION)

    def keys(self) -> list[str]:
        """Every object key in the bucket."""
        listed = self.client().list_objects_v2(Bucket=self.name)
        return [item["Key"] for item in listed.get("Contents", [])]


@contextmanager
def s3_bucket() -> Iterator[FakeBucket]:
    """Run the server on a free loopback port with one new, empty bucket; stop it afterwards.

    Needs `CREDENTIALS` in the environment (the `s3` fixture sets them). moto keeps its objects
    in the process, not the server: the state is reset when the server stops.
    """
    from moto.server import ThreadedMotoServer  # as boto3 above: only where a test uses it

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint_url = f"http://{host}:{port}"
    try:
        bucket = FakeBucket(endpoint_url=endpoint_url, name=f"synapse-{uuid.uuid4().hex[:12]}")
        bucket.client().create_bucket(Bucket=bucket.name)
        yield bucket
    finally:
        httpx.post(f"{endpoint_url}/moto-api/reset", timeout=60)  # a loaded machine can be slow
        server.stop()
