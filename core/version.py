"""Synapse's version: the installed package's, as `synapse --version` and the OpenAPI document say it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def synapse_version() -> str:
    """The version of the installed `synapse` package ("unknown" when run from a bare checkout)."""
    try:
        return version("synapse")
    except PackageNotFoundError:
        return "unknown"
