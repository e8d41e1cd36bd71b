"""One declared MCP server, kept connected while the worker runs (the official `mcp` SDK).

A background task connects (a stdio server is started on this worker; a URL is reached over
streamable HTTP, both with the initialize handshake every server speaks), lists the server's
tools, then pings it every `ping_seconds`. A server that fails, or exits, is marked down with why,
and reconnected with backoff; its calls meanwhile fail at once, saying so. Calls to one server
run one at a time in each worker, so a question the server asks mid-call (an elicitation) belongs
to the call in progress.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from contracts import McpServerSpec

logger = logging.getLogger(__name__)

CONNECT_SECONDS = 20.0
"""How long a worker waits at start for a server to answer before going on without it."""
PING_WAIT = 10.0
BACKOFF_MAX = 30.0


class McpUnavailable(RuntimeError):
    """The server is down; the message says why."""


class Asker(Protocol):
    """Asks the person what a server wants to know mid-call (`elicit.ActivityAsker`)."""

    async def ask(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        """The person's answer, as MCP's result."""
        ...


State = Literal["up", "down", "unknown"]


class McpConnection:
    """One server: its state, its tools, and calls to them."""

    def __init__(self, spec: McpServerSpec, changed: Callable[[McpConnection], None]) -> None:
        self.spec = spec
        self.state: State = "unknown"
        self.error: str | None = None
        self.checked_at: datetime | None = None
        self.tools: list[types.Tool] = []
        self._changed = changed
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._asker: Asker | None = None
        self._stop = asyncio.Event()
        self._first = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect in the background; return once the server answered (or failed, or took too long)."""
        self._task = asyncio.create_task(self._keep(), name=f"mcp server {self.spec.name}")
        try:
            await asyncio.wait_for(self._first.wait(), CONNECT_SECONDS)
        except TimeoutError:
            self._set("down", f"no answer within {CONNECT_SECONDS:g} s; still trying")

    async def close(self) -> None:
        """Disconnect (a stdio server is stopped)."""
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def call(self, name: str, arguments: dict[str, Any], asker: Asker) -> types.CallToolResult:
        """Call one of its tools (`McpUnavailable` when it is down; `TimeoutError` past its timeout)."""
        async with self._lock:
            client = self._client
            if client is None:
                raise McpUnavailable(
                    f"MCP server {self.spec.name!r} is down: {self.error or 'not connected yet'}"
                )
            self._asker = asker
            try:
                return await asyncio.wait_for(client.call_tool(name, arguments), self.spec.timeout_seconds)
            finally:
                self._asker = None

    # ---------------------------------------------------------------- keeping it connected

    async def _keep(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                async with Client(
                    self._target(), mode="legacy", elicitation_callback=self._elicited
                ) as client:
                    self.tools = await _all_tools(client)
                    self._client = client
                    failures = 0
                    self._set("up", None)
                    await self._watch(client)
            except Exception as err:  # the SDK raises what the transport and the server give
                failures += 1
                self._set("down", _said(err))
                logger.warning("MCP server %s: %s", self.spec.name, self.error)
            finally:
                self._client = None
            if not self._stop.is_set():
                await self._pause(min(2.0 ** min(failures, 5), BACKOFF_MAX))
        self._set("down", "the worker stopped")

    async def _watch(self, client: Client) -> None:
        """Ping it until the worker stops (a failed ping ends the connection)."""
        while not self._stop.is_set():
            await self._pause(self.spec.ping_seconds)
            if self._stop.is_set():
                return
            async with self._lock:
                with warnings.catch_warnings():  # deprecated for 2026-era servers; ours speak the handshake
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await asyncio.wait_for(client.send_ping(), PING_WAIT)
            self.checked_at = datetime.now(UTC)

    async def _pause(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except TimeoutError:
            pass

    def _target(self) -> StdioServerParameters | str:
        spec = self.spec
        if spec.url is not None:
            return spec.url
        assert spec.command is not None
        return StdioServerParameters(command=spec.command, args=spec.args, env=spec.env or None, cwd=spec.cwd)

    def _set(self, state: State, error: str | None) -> None:
        changed = (state, error) != (self.state, self.error)
        self.state, self.error, self.checked_at = state, error, datetime.now(UTC)
        self._first.set()
        if changed:
            self._changed(self)

    async def _elicited(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The server asks the person something mid-call: the call's asker takes it to them."""
        asker = self._asker
        if asker is None or not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")  # no call of ours runs, or a URL to open
        return await asker.ask(params.message, params.requested_schema)


async def _all_tools(client: Client) -> list[types.Tool]:
    found: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        found += page.tools
        cursor = page.next_cursor
        if not cursor:
            return found


def _said(err: BaseException) -> str:
    """What went wrong, in one line (the first of a group's errors)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if text != type(err).__name__ else text
