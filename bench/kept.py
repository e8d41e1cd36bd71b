"""The bare shape that keeps a session's promises (`bare.BareKept`), started as a session starts:
signal-with-start with a session's search attributes, until its request shows as waiting."""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowHandle

from contracts import SessionConfig
from workflows.session.view import start_search_attributes

from . import synapse
from .bare import BareKept
from .harness import Stack
from .history import sets_status, wait_event


async def kept_pending(
    stack: Stack, prefix: str, message: str, *, queue: str = ""
) -> WorkflowHandle[Any, Any]:
    """Start one `BareKept` with `message` (on `queue`, the stack's bare queue by default) and wait
    on history until its request is open; its handle."""
    key = stack.key(prefix)
    handle = await stack.client.start_workflow(
        BareKept.run,
        stack.settings.api.approval_timeout_seconds,
        id=key,
        task_queue=queue or stack.bare_queue,
        start_signal="message",
        start_signal_args=[message],
        search_attributes=start_search_attributes(SessionConfig(session_key=key)),
    )
    await wait_event(
        handle, sets_status("waiting_approval"), within=synapse.WAIT_WITHIN, what=f"{key} pending"
    )
    return handle
