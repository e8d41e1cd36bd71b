"""MCP servers as Synapse sees them: what a worker found when it connected, for `GET /mcp`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import Contract
from .tools import ToolDescriptor


class McpServerStatus(Contract):
    """One declared MCP server: whether a worker reaches it, and the tools it gives."""

    name: str = Field(description="Its name in the declarations (`[mcp_servers.<name>]`).")
    transport: Literal["stdio", "http"] = Field(
        description="A command on the worker, or a streamable HTTP URL."
    )
    state: Literal["up", "down", "unknown"] = Field(description="What the worker found last.")
    error: str | None = Field(default=None, description="Why it is down.")
    tools: list[ToolDescriptor] = Field(
        default_factory=list, description="Its tools as Synapse offers them (cached while it is down)."
    )
    checked_at: datetime | None = Field(default=None, description="When a worker last looked (UTC).")
