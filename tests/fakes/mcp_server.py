"""The MCP tool tests' server: the shipped example (examples/mcp/notes_server.py) as it is, which
first writes its pid to `$PID_FILE`, so a test can kill it.

Tools: `add_note(text)` appends to `$NOTES_FILE`; `list_notes()` reads it (read-only); `greet()`
asks the person's name (an elicitation) and greets them.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp" / "notes_server.py"

if __name__ == "__main__":
    Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
    runpy.run_path(str(EXAMPLE), run_name="__main__")
