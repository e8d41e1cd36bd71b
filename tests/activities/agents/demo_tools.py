"""Tools the demo twins are tested with: the builtins plus a `terminal` descriptor.

The terminal tool itself is not built yet; declaring it lets the twins' `!command` rule be
compared with `activities.agents.demo.decide`.
"""

from __future__ import annotations

from activities.tools.registry import builtin_tools
from contracts import ToolDescriptor

TERMINAL = ToolDescriptor(
    name="terminal",
    description="Run a shell command.",
    arguments_schema={
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
)
TOOLS = {**builtin_tools(), "terminal": TERMINAL}
