"""Deterministic workflow code, a package per concept: the workflows (`session/`: SessionWorkflow;
`graph/`: TaskGraphWorkflow and, in `graph/task_run/`, AgentTaskWorkflow), what they share
(`agent/`: the agent loop; `supervision/`: requests, decisions, grants, interventions and the
handlers; `stream/`: the chunk stream, its watchers and the archive), and how workflows are named
and found (`identity/`), and which code path a run follows (`versioning/`).

Imports only `contracts` and other workflow modules (no settings, no I/O); passed through the
sandbox once per worker (see `worker.py`)."""
