"""A notebook as an MCP server: the example of docs/mcp.md, on the official `mcp` SDK (2.x).

Tools:
- `add_note(text)` appends a line to the notebook (a write: Synapse asks a person first);
- `list_notes()` reads it (annotated read-only);
- `greet()` asks the person's name while it runs (an MCP elicitation, which Synapse turns into a
  question on any channel) and greets them.

The notebook is the file `$NOTES_FILE` (default `notes.txt` in the folder the server starts in).
Declare it in the agents file (`synapse.toml`) and the worker starts it over stdio:

    [mcp_servers.notes]
    command = ".venv/bin/python"
    args = ["examples/mcp/notes_server.py"]

Run alone (`.venv/bin/python examples/mcp/notes_server.py`) it speaks MCP on stdin and stdout.
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
    """What `greet` asks for."""

    name: str


@server.tool()
async def greet(ctx: Context) -> str:
    """Greet the person, asking their name first."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action == "accept" and answer.data is not None:
        return f"hello {answer.data.name}"
    return f"no name given ({answer.action})"


if __name__ == "__main__":
    server.run("stdio")
