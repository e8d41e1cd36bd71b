"""The MCP servers a worker offers tools from: connected at its start, tools filtered as declared.

`McpServers.start` connects to every server declared in the agents file (`[mcp_servers.<name>]`)
at once, waiting up to `CONNECT_SECONDS` for each; a server that is down does not stop the worker:
its tools are still offered from the status file's cache, and their calls say it is down. Every
change of a server's state is written to the status file (`status`), which the API reads.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import mcp_types as types

from contracts import McpServerSpec, McpServerStatus, ToolDescriptor
from core.nesting import DEFAULT_LIMIT

from .connection import McpConnection
from .status import read_statuses, write_statuses
from .tool import McpTool

logger = logging.getLogger(__name__)


class McpServers:
    """The declared servers of one worker, and the tools they give."""

    def __init__(
        self, specs: dict[str, McpServerSpec], data_dir: Path, max_json_depth: int = DEFAULT_LIMIT
    ) -> None:
        """`max_json_depth`: the deployment's nesting limit, applied to what a server sends that enters
        a workflow (its tools' schemas, its questions' schemas)."""
        self._data_dir = data_dir
        self._max_json_depth = max_json_depth
        self.connections = {name: McpConnection(spec, self._changed) for name, spec in specs.items()}
        self._cached = {status.name: status for status in read_statuses(data_dir)}

    async def start(self) -> None:
        """Connect to every server (in parallel); write what was found."""
        if self.connections:
            await asyncio.gather(*(connection.start() for connection in self.connections.values()))
            self._write()

    async def close(self) -> None:
        """Disconnect from every server."""
        await asyncio.gather(*(connection.close() for connection in self.connections.values()))

    def tools(self) -> dict[str, McpTool]:
        """The tools the servers give, by Synapse id, as their declarations filter them."""
        found: dict[str, McpTool] = {}
        for name, connection in self.connections.items():
            spec = connection.spec
            remotes = connection.tools or [_remote(d) for d in self._cached.get(name, _NONE).tools]
            for remote in remotes:
                if (spec.include_tools is None or remote.name in spec.include_tools) and (
                    remote.name not in spec.exclude_tools
                ):
                    tool = McpTool(connection, remote, self._max_json_depth)
                    found[tool.descriptor.name] = tool
        return found

    def descriptors(self) -> dict[str, ToolDescriptor]:
        """What agents are told of the servers' tools (a down server's as last seen)."""
        return {name: tool.descriptor for name, tool in self.tools().items()}

    def statuses(self) -> list[McpServerStatus]:
        """Each server's state and tools (a down one's tools as last seen)."""
        by_server: dict[str, list[ToolDescriptor]] = {}
        for tool in self.tools().values():
            by_server.setdefault(tool.server.spec.name, []).append(tool.descriptor)
        return [
            McpServerStatus(
                name=name,
                transport="http" if connection.spec.url else "stdio",
                state=connection.state,
                error=connection.error,
                tools=by_server.get(name, []),
                checked_at=connection.checked_at,
            )
            for name, connection in self.connections.items()
        ]

    def _changed(self, connection: McpConnection) -> None:
        logger.info(
            "MCP server %s is %s%s",
            connection.spec.name,
            connection.state,
            f": {connection.error}" if connection.error else "",
        )
        self._write()

    def _write(self) -> None:
        try:
            write_statuses(self._data_dir, self.statuses())
        except OSError as err:
            logger.warning("could not write the MCP status file: %s", err)


_NONE = McpServerStatus(name="none", transport="stdio", state="unknown")


def _remote(descriptor: ToolDescriptor) -> types.Tool:
    """A cached tool as the server described it (its Synapse name without the server's prefix)."""
    name = descriptor.name.split("__", 2)[-1]
    return types.Tool(name=name, description=descriptor.description, input_schema=descriptor.arguments_schema)
