"""Sandbox profiles: where an approved terminal command may reach."""

from __future__ import annotations

from enum import StrEnum


class SandboxProfile(StrEnum):
    """Where an approved terminal command may reach (bubblewrap on the worker's PTY terminals).

    A command that runs without approval always runs in a stricter sandbox of its own: the trusted
    folders read-only, nothing else of the file system, no network (see the terminal tool)."""

    WORKSPACE_WRITE = "workspace-write"
    """Writes only under the workspace folder and a /tmp of its own; reads the rest; the network only
    where the operator shares the host's (`SYNAPSE_TERMINAL_NETWORK=host`)."""
    READ_ONLY = "read-only"
    """Writes nothing (a /tmp of its own, gone with the command); reads the rest; no network."""
    FULL = "full"
    """No sandbox: the command runs in the terminal as it is."""
