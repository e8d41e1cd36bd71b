"""The tools agents may be offered: the builtin ones, and those of the declared MCP servers.

What the MCP servers give, and whether they answer, is what the workers last found (they write it
to `<data_dir>/mcp.json`, which the API reads; see `activities/tools/mcp/status.py`).
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from activities.tools.mcp.status import read_statuses
from activities.tools.registry import builtin_tools
from contracts import McpServerStatus, ToolDescriptor

from ..deps import SettingsDep, Viewer
from ..errors import ERROR_RESPONSES

router = APIRouter(tags=["tools"])


@router.get("/tools", response_model=list[ToolDescriptor], responses=ERROR_RESPONSES(401, 403))
async def list_tools(settings: SettingsDep, caller: Viewer) -> list[ToolDescriptor]:
    """Every tool: the builtin ones, then each MCP server's (`mcp__<server>__<tool>`, `source: mcp`)."""
    servers = await asyncio.to_thread(read_statuses, settings.data_dir)
    return [*builtin_tools().values(), *(tool for server in servers for tool in server.tools)]


@router.get("/mcp", response_model=list[McpServerStatus], responses=ERROR_RESPONSES(401, 403))
async def list_mcp_servers(settings: SettingsDep, caller: Viewer) -> list[McpServerStatus]:
    """The declared MCP servers: `up` or `down` (with why) as a worker last found them, and their tools."""
    return await asyncio.to_thread(read_statuses, settings.data_dir)
