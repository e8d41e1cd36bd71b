"""`synapse history export`: save a workflow's event history as JSON, for replay tests.

The file is what `temporalio.client.WorkflowHistory.from_json` reads, so dropping it into
`tests/histories/` makes every test run replay it with `temporalio.worker.Replayer`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.service import RPCError, RPCStatusCode

from core.connect import ConnectError, connect_client
from core.settings import Settings


class HistoryError(Exception):
    """The history could not be exported; the message is one line for the user."""


async def fetch_history(settings: Settings, workflow_id: str, run_id: str | None = None) -> WorkflowHistory:
    """Fetch the history of `workflow_id` (its latest run unless `run_id` is given).

    Raises:
        ConnectError: Temporal could not be reached.
        HistoryError: The workflow or run does not exist, or the server refused.
    """
    client = await connect_client(settings)
    run = f" run {run_id!r}" if run_id else ""
    try:
        return await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise HistoryError(
                f"error: workflow {workflow_id!r}{run} not found in namespace {client.namespace!r} "
                f"({err.message})"
            ) from err
        raise HistoryError(
            f"error: could not fetch the history of {workflow_id!r}{run}: {err.message}"
        ) from err


def export(settings: Settings, workflow_id: str, path: Path, run_id: str | None = None) -> int:
    """`synapse history export WORKFLOW_ID FILE [--run-id R]`.

    Returns:
        The exit code: 0 when written, 1 when Temporal or the workflow could not be reached.
    """
    try:
        history = asyncio.run(fetch_history(settings, workflow_id, run_id))
    except (ConnectError, HistoryError) as err:
        print(err, file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(history.to_json())
    print(f"wrote {len(history.events)} events of {workflow_id!r} to {path}")
    return 0
