"""A stdio MCP server written with the official SDK, for the MCP tool tests (the worker starts it).

Tools: `add_note(text)` appends to `$NOTES_FILE`; `list_notes()` reads it (read-only); `greet()`
asks the person's name (an elicitation) and greets them. It writes its pid to `$PID_FILE`, so a
test can kill it.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("notes")
NOTES = Path(os.environ.get("NOTES_FILE", "notes.txt"))


@server.tool()
def add_note(text: str) -> str:
    """Add a note to the notebook."""
    with NOTES.open("a") as notes:
        notes.write(text + "\n")
    return f"noted ({len(NOTES.read_text().splitlines())} notes)"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_notes() -> str:
    """Every note in the notebook."""
    return NOTES.read_text() if NOTES.exists() else ""


class Name(BaseModel):
    name: str


@server.tool()
async def greet(ctx: Context) -> str:
    """Greet the person, asking their name first."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action == "accept" and answer.data is not None:
        return f"hello {answer.data.name}"
    return f"no name given ({answer.action})"


if __name__ == "__main__":
    Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
    server.run("stdio")
