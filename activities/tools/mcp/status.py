"""What the workers know of the MCP servers, in one file the API reads (`GET /mcp`, `GET /tools`).

`<data_dir>/mcp.json`: each declared server's state, why it is down, and its tools as Synapse
offers them. Written by a worker whenever a server's state changes (atomically: a reader never
sees half of it); it is also the schema cache: a worker that starts while a server is down still
offers the server's tools from it (their calls then say the server is down).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import TypeAdapter

from contracts import McpServerStatus

FILE_NAME = "mcp.json"
STATUSES = TypeAdapter(list[McpServerStatus])


def status_path(data_dir: Path) -> Path:
    """Where the status file is."""
    return data_dir / FILE_NAME


def read_statuses(data_dir: Path) -> list[McpServerStatus]:
    """The servers as a worker last wrote them (empty: no worker wrote yet, or none is declared)."""
    path = status_path(data_dir)
    try:
        return STATUSES.validate_json(path.read_bytes())
    except (OSError, ValueError):
        return []


def write_statuses(data_dir: Path, statuses: list[McpServerStatus]) -> None:
    """Replace the file with `statuses`, atomically."""
    path = status_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    temporary.write_bytes(STATUSES.dump_json(statuses, by_alias=True))
    temporary.replace(path)
