"""What every entry point shares: settings, the agent registry, the Temporal connection, security.

Imports `contracts` only (and libraries); `cli/`, `api/`, `worker.py`, `workflows/` and
`activities/` build on it, never the other way round.
"""
