"""The registry of tools: the one place a tool is added (one line in `TOOLS`).

Changing a descriptor (e.g. its approval policy) changes how new tool calls are assessed;
calls already assessed keep their recorded assessment.
"""

from __future__ import annotations

from collections.abc import Iterable

from contracts import ToolDescriptor
from core.settings import Settings

from .ask_user.tool import AskUserTool
from .plugin import Tool
from .sql.tool import SqlTool
from .terminal.tool import TerminalTool

TOOLS: tuple[type[Tool], ...] = (SqlTool, TerminalTool, AskUserTool)
"""Every builtin tool, by class."""

ALWAYS_DECLARED = (AskUserTool.DESCRIPTOR.name,)
"""Tools every agent is told about, whatever its declaration lists (asking the user)."""


def declared_tools(names: Iterable[str], tools: dict[str, ToolDescriptor]) -> dict[str, ToolDescriptor]:
    """The descriptors an agent is told about: those it names that exist (`mcp__notes__*` names
    every tool of the `notes` MCP server), plus `ALWAYS_DECLARED`."""
    wanted = [*names, *(name for name in ALWAYS_DECLARED if name not in names)]
    return {known: d for known, d in tools.items() if allows(wanted, known)}


def allows(names: Iterable[str], tool_id: str) -> bool:
    """Whether a declaration's tool names take in `tool_id` (`mcp__notes__*`: every `notes` tool)."""
    return any(tool_id == name or (name.endswith("*") and tool_id.startswith(name[:-1])) for name in names)


def tool_class(name: str) -> type[Tool] | None:
    """The registered tool called `name`, if any."""
    return next((tool for tool in TOOLS if tool.DESCRIPTOR.name == name), None)


def builtin_tools() -> dict[str, ToolDescriptor]:
    """The builtin tools' descriptors by name (a fresh dict; callers may add to it)."""
    return {tool.DESCRIPTOR.name: tool.DESCRIPTOR for tool in TOOLS}


def build_tools(settings: Settings) -> dict[str, Tool]:
    """One configured instance of every tool, by name."""
    return {tool.DESCRIPTOR.name: tool.from_settings(settings) for tool in TOOLS}
