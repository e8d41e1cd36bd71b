"""MCP servers as Synapse sees them: what a worker found when it connected, for `GET /mcp`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from .base import Contract
from .principals import PersonId
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


class McpServerSpec(Contract):
    """One MCP server, as declared in the agents file (`[mcp_servers.<name>]`): a command the
    worker starts (stdio) or a streamable HTTP URL."""

    name: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,30}$", description="Its name (tool ids start with it)."
    )
    command: str | None = Field(default=None, description="stdio: the program to start on the worker.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: variables set for it.")
    cwd: str | None = Field(default=None, description="stdio: the folder it starts in.")
    url: str | None = Field(
        default=None, pattern=r"^https?://", description="Streamable HTTP: the server's endpoint."
    )
    trust: bool = Field(
        default=False, description="True: its calls run without asking (approval rules still apply)."
    )
    include_tools: list[str] | None = Field(default=None, description="Only these of its tools (None: all).")
    exclude_tools: list[str] = Field(default_factory=list, description="None of these of its tools.")
    timeout_seconds: float = Field(default=120, gt=0, le=3600, description="Longest one call may take.")
    ping_seconds: float = Field(
        default=15, gt=0, description="How often a worker checks that the server still answers."
    )


class Elicitation(Contract):
    """An MCP server asks the person something while one of its tools runs (`elicit` signal)."""

    elicitation_id: str = Field(description="Unique for the run that asks (its activity and a counter).")
    tool_id: str = Field(description="The tool that is running.")
    message: str = Field(description="What the server asks.")
    requested_schema: dict[str, Any] = Field(
        default_factory=dict, description="The JSON Schema of the answer the server wants (flat object)."
    )
    timeout_seconds: int = Field(gt=0, description="How long it waits for an answer.")


class ElicitationAnswer(Contract):
    """What the person answered (`get_elicitation` query; None until then)."""

    action: Literal["accept", "decline", "cancel"] = Field(
        description="MCP's answer kinds: accepted (answered), declined, cancelled (nobody answered in time)."
    )
    text: str | None = Field(default=None, description="The person's answer, when accepted.")
    decided_by: PersonId | None = Field(default=None, description="Who answered.")
