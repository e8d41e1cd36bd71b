"""Deterministic workflow code: `session/`, `graph/`, `supervision/`, the shared agent loop, the chunk stream.

Imports only `contracts` and other workflow modules (no settings, no I/O); passed through the
sandbox once per worker (see `worker.py`)."""
