"""Tools as ADK sees them: declared from `ToolDescriptor`s, never run; proposed calls checked.

`DeclaredTool` gives the model a function declaration built from the descriptor's JSON schema;
its `run_async` raises, because the adapter stops at the model's function-call event and the
workflow runs tools after its approval gate. `call_problem` says why a proposed call cannot be
handed to the workflow (not JSON, unknown tool, arguments against the schema), in words the
model can act on when it is asked again.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from contracts import ToolDescriptor

from ..proposed import call_problem as proposed_call_problem


class DeclaredTool(BaseTool):
    """A tool declared to the model from its `ToolDescriptor`; it is never run by ADK."""

    def __init__(self, descriptor: ToolDescriptor) -> None:
        """Declare `descriptor` (name, description, JSON schema of the arguments)."""
        super().__init__(name=descriptor.name, description=descriptor.description)
        self.descriptor = descriptor

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.descriptor.arguments_schema,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Never called: the step stops at the function-call event; tools run in the workflow."""
        raise RuntimeError(
            f"tool {self.name!r} must not run inside the ADK adapter; the workflow runs tools after "
            "its approval gate"
        )


def call_problem(
    call: types.FunctionCall, allowed: dict[str, ToolDescriptor], malformed: dict[str, str]
) -> str | None:
    """Why a proposed call cannot go to the workflow, or None when it is well formed."""
    if call.id in malformed:
        return f"call to {call.name!r}: {malformed[call.id or '']}"
    return proposed_call_problem(call.name or "", call.args or {}, allowed)
