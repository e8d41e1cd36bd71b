"""One tool of an MCP server, offered as a Synapse tool plugin (`mcp__<server>__<tool>`).

Its calls go through the same gate, approval rules, grants and audit as the builtin tools: a
person is asked unless the server's declaration trusts it. It runs in the `run_tool` activity on
any worker (each keeps its own connection); a failure, a server that is down, or a call past its
timeout is a result the agent reads (`ok=False`), never an activity error: the activity is not
retried, so a call never reaches the server twice.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Self

import mcp_types as types

from contracts import ToolCallRequest, ToolDescriptor, ToolResult, ToolRun
from core.nesting import DEFAULT_LIMIT, cut_nesting
from core.settings import Settings

from ..plugin import Tool, one_line
from .connection import McpConnection, McpUnavailable
from .elicit import ActivityAsker

PREFIX = "mcp__"


def tool_id(server: str, name: str) -> str:
    """The Synapse id of a server's tool: `mcp__<server>__<tool>` (a name models accept)."""
    return f"{PREFIX}{server}__{name}"


def descriptor_of(
    server: McpConnection, remote: types.Tool, max_json_depth: int = DEFAULT_LIMIT
) -> ToolDescriptor:
    """How Synapse declares a server's tool to agents, and gates it (its schema cut at the nesting
    limit: it reaches workflows, whose payloads are read back only so deep)."""
    spec = server.spec
    read_only = bool(remote.annotations and remote.annotations.read_only_hint)
    return ToolDescriptor(
        name=tool_id(spec.name, remote.name),
        description=remote.description or remote.title or f"{remote.name} of MCP server {spec.name}",
        arguments_schema=cut_nesting(remote.input_schema or {"type": "object"}, max_json_depth),
        permissions=["read"] if read_only else ["read", "write"],
        source="mcp",
        capabilities=[],
        approval="never" if spec.trust else "always",
    )


class McpTool(Tool):
    """A tool of a connected MCP server."""

    def __init__(
        self, server: McpConnection, remote: types.Tool, max_json_depth: int = DEFAULT_LIMIT
    ) -> None:
        self.descriptor = descriptor_of(server, remote, max_json_depth)  # its own, not a class's DESCRIPTOR
        self.max_json_depth = max_json_depth
        self.server = server
        self.remote_name = remote.name

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """Not built from settings: `servers.McpServers` makes one per tool its servers offer."""
        raise TypeError("MCP tools are made by McpServers from the servers they connect to")

    def summarize(self, call: ToolCallRequest) -> str:
        """`mcp__notes__add_note {"text": "..."}`."""
        return one_line(f"{call.tool_id} {json.dumps(call.arguments, ensure_ascii=False)}")

    async def run(self, run: ToolRun) -> ToolResult:
        """Call the server's tool; what it answers (its error too) as the result."""
        call = run.call
        asker = ActivityAsker(run, time.monotonic(), self.max_json_depth)
        serving = asyncio.create_task(asker.serve())  # in this activity's context (see `elicit`)
        try:
            answer = await self.server.call(self.remote_name, call.arguments, asker)
        except McpUnavailable as err:
            return ToolResult(tool_id=call.tool_id, ok=False, error=str(err))
        except TimeoutError:
            return ToolResult(
                tool_id=call.tool_id,
                ok=False,
                error=f"MCP server {self.server.spec.name!r} did not answer within "
                f"{self.server.spec.timeout_seconds:g} s; the call may have run",
            )
        except Exception as err:  # the SDK's protocol errors: the server refused the call
            return ToolResult(
                tool_id=call.tool_id, ok=False, error=f"MCP server {self.server.spec.name!r}: {err}"
            )
        finally:
            serving.cancel()
        return result_of(call.tool_id, answer)


def result_of(tool: str, answer: types.CallToolResult) -> ToolResult:
    """A server's answer as a Synapse result: its structured content, else its text."""
    texts = [block.text for block in answer.content if isinstance(block, types.TextContent)]
    others = [block.type for block in answer.content if not isinstance(block, types.TextContent)]
    text = "\n".join(texts)
    content: Any = answer.structured_content if answer.structured_content is not None else text
    metadata = {"content_types": others} if others else {}
    if answer.is_error:
        return ToolResult(tool_id=tool, ok=False, error=text or "the tool failed", metadata=metadata)
    return ToolResult(tool_id=tool, ok=True, content=content, metadata=metadata)
