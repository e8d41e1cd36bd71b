"""A question an MCP server asks mid-call, taken to the person through the workflow that runs it.

The running `run_tool` activity signals its workflow (`elicit`): the workflow opens a USER_INPUT
request, answered like the agent's questions on any channel (`response_data.text`). The activity
reads the answer with the `get_elicitation` query, heartbeating while it waits, and gives the
server MCP's result: the text fitted to the schema the server asked for (`fitted`), a decline, or
a cancel when nobody answered within the time the call has left.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from datetime import timedelta
from typing import Any

import mcp_types as types
from temporalio import activity
from temporalio.service import RPCError, RPCStatusCode

from contracts import Elicitation, ElicitationAnswer, ToolRun
from contracts.names import ELICIT, GET_ELICITATION
from core.nesting import DEFAULT_LIMIT, cut_nesting

POLL_SECONDS = 0.5
ASK_WAIT = timedelta(seconds=5)
"""How long one look for the answer waits for the session's worker before asking again (a worker
can drop a query that reaches it while it takes the session out of its cache)."""
MARGIN_SECONDS = 15.0
"""Kept of the activity's time after the person's answer: the server still has to finish the call."""
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "ok", "是", "好", "确认"})


class ActivityAsker:
    """Asks for one `run_tool` activity (see the module docstring).

    The server's question arrives on the MCP session's own task, outside the activity's context,
    so `ask` hands it to `serve`, which the activity runs beside the call (in its context: it may
    signal, query and heartbeat)."""

    def __init__(
        self, run: ToolRun, started: float | None = None, max_json_depth: int = DEFAULT_LIMIT
    ) -> None:
        info = activity.info()
        self._max_json_depth = max_json_depth
        self._owner = run.owner_id
        self._tool = run.call.tool_id
        self._prefix = f"{info.workflow_run_id}/{info.activity_id}/{info.attempt}"
        self._counter = itertools.count(1)
        timeout = info.start_to_close_timeout.total_seconds() if info.start_to_close_timeout else 300.0
        self._deadline = (started or time.monotonic()) + timeout - MARGIN_SECONDS
        self._asked: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[types.ElicitResult]]] = (
            asyncio.Queue()
        )

    async def ask(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        """The person's answer to `message` (taken to them by `serve`)."""
        answered: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()
        await self._asked.put((message, schema, answered))
        return await answered

    async def serve(self) -> None:
        """Take each question to the person, in the activity's context, until cancelled."""
        while True:
            message, schema, answered = await self._asked.get()
            try:
                answered.set_result(await self._ask_person(message, schema))
            except Exception as err:  # the workflow is gone, or refused the signal: nobody answers
                answered.set_result(types.ElicitResult(action="cancel"))
                activity.logger.warning("elicitation of %s not asked: %s", self._tool, err)

    async def _ask_person(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        left = self._deadline - time.monotonic()
        if left < 1:
            return types.ElicitResult(action="cancel")
        asked = Elicitation(
            elicitation_id=f"{self._prefix}/{next(self._counter)}",
            tool_id=self._tool,
            message=message,
            requested_schema=cut_nesting(schema, self._max_json_depth),  # the workflow reads it back
            timeout_seconds=int(left),
        )
        handle = activity.client().get_workflow_handle(self._owner)
        await handle.signal(ELICIT, asked)
        while time.monotonic() < self._deadline:
            activity.heartbeat(asked.elicitation_id)
            try:
                answer = await handle.query(
                    GET_ELICITATION,
                    asked.elicitation_id,
                    result_type=ElicitationAnswer | None,  # type: ignore[arg-type]
                    rpc_timeout=ASK_WAIT,
                )
            except RPCError as err:
                if err.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED):
                    raise
                continue  # its worker dropped the query, or is busy: ask again

            if answer is not None:
                return _result(answer, schema)
            await asyncio.sleep(POLL_SECONDS)
        return types.ElicitResult(action="cancel")


def _result(answer: ElicitationAnswer, schema: dict[str, Any]) -> types.ElicitResult:
    if answer.action != "accept":
        return types.ElicitResult(action=answer.action)
    content = fitted(answer.text or "", schema)
    return (
        types.ElicitResult(action="accept", content=content)
        if content is not None
        else types.ElicitResult(action="decline")
    )


def fitted(text: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The person's text as the object the server's schema describes (None: it does not fit).

    A JSON object is taken as it is; otherwise the text answers the schema's one field (or its one
    required field), as a string, number, integer or yes/no."""
    properties: dict[str, Any] = schema.get("properties") or {}
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return {key: value for key, value in parsed.items() if not properties or key in properties}
    required = [name for name in schema.get("required") or [] if name in properties]
    names = list(properties) if len(properties) == 1 else required if len(required) == 1 else []
    if not names:
        return None
    value = _as(text.strip(), (properties[names[0]] or {}).get("type", "string"))
    return None if value is None else {names[0]: value}


def _as(text: str, kind: str) -> Any:
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return None
    if kind == "boolean":
        return text.lower() in TRUE_WORDS
    return text
