"""Links into the web console, for webhook notifications and chat cards."""

from __future__ import annotations

from urllib.parse import quote

from contracts.names import GRAPH_PREFIX, SESSION_PREFIX


def console_link(base: str, workflow_id: str, interaction_id: str | None = None) -> str:
    """Where the workflow that asks (a session `session:<key>`, a graph `graph:<uuid>` or one of
    its task runs `graph:<uuid>:task:…`) is opened in the console at `base`, at one of its requests:
    a graph's requests, its task runs' too, are decided on the graph's page."""
    if workflow_id.startswith(GRAPH_PREFIX):
        page = f"graphs/{quote(workflow_id.removeprefix(GRAPH_PREFIX).split(':', 1)[0], safe='')}"
    else:
        page = f"sessions/{quote(workflow_id.removeprefix(SESSION_PREFIX), safe='')}"
    link = f"{base.rstrip('/')}/#/{page}"
    return f"{link}?interaction={quote(interaction_id, safe='')}" if interaction_id else link
