"""Builds the Temporal worker: every workflow and activity on one shared task queue.

Each worker also polls a task queue of its own (`<queue>@<host>-<pid>-<random>`), for the
tools that keep state in the worker that ran them (a session's terminal): their later calls
are sent there (see `WorkerBinding`).

`python worker.py` (or `synapse worker`) runs it against the Temporal chosen the standard
way (envconfig profile or TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY / TLS).
Run more of them to scale out.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.worker import UnsandboxedWorkflowRunner, Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.agents.directory import AgentDirectory
from activities.agents.step import AgentActivities
from activities.artifacts.archive import ArchiveActivities
from activities.artifacts.whole import WholeOutputActivities
from activities.channels.delivery import ChatDelivery
from activities.channels.webhook.delivery import WebhookActivities
from activities.experience.index import ExperienceActivities
from activities.tools.mcp.servers import McpServers
from activities.tools.runner import ToolActivities
from core.agent_registry import load_registry
from core.artifacts import ArtifactStore
from core.runner import ContextFree, takes_no_context
from core.settings import Settings
from workflows.graph import AgentTaskWorkflow, TaskGraphWorkflow
from workflows.graph.cel import prepare_parser
from workflows.session import SessionWorkflow

log = logging.getLogger("synapse.worker")

HEARTBEAT_THROTTLE = timedelta(seconds=1)
"""Heartbeats reach the server at most this often (the SDK's default: 80% of the heartbeat
timeout, 8 s for a terminal command). A heartbeat's answer is how a running activity learns it
was cancelled, so this bounds how long a cancelled command runs on before its Ctrl-C."""

DEADLOCK_SECONDS = 30.0
"""How long one workflow activation may run before the SDK calls it deadlocked (its default: 2 s).

Past that limit the SDK raises an exception into the workflow's thread and fails the task
(`TMPRL1101`). On a starved machine (two cores running the whole test suite, a graph of a
thousand runs) an ordinary activation can take over 2 s, and the interrupted run can then never
be evicted: the worker keeps it, answers none of its tasks (each times out), and cannot shut down
(the SDK logs "Failed running eviction job ... continually retrying eviction"). Seen in CI: a
1,000-record loop stuck for good, its test's teardown hung until CI gave up. Synapse's workflows
do no I/O and never loop unbounded, and the interruption frees nothing (the run stays stuck), so
a longer limit only makes a real deadlock's report come later.
"""

WORKFLOWS: Sequence[type] = (SessionWorkflow, TaskGraphWorkflow, AgentTaskWorkflow)

WORKFLOW_RUNNER = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules(
        "workflows", "contracts", "celpy", "opentelemetry"
    )
)
"""The sandbox still checks every run, but our own workflow modules are imported once.

Re-importing `workflows/` into a fresh sandbox for every run took about a third of the worker's
CPU per session start (bench/many: 67 ms CPU and 24 starts/s; passing it through: ~30 ms CPU per
start). Safe because these modules hold no mutable module-level state shared between runs; keep
it that way (`workflows.versioning` keeps the changes each run takes by the run's own event loop).
`celpy` (graph conditions) is passed through too: it does no I/O, and the sandbox cannot import
its date library.
"""
UNSANDBOXED = UnsandboxedWorkflowRunner()
"""`SYNAPSE_WORKFLOW_SANDBOX=false`: workflow code runs as it is, unchecked (it is checked by the
test and replay suites, which run sandboxed)."""


class SynapseWorker:
    """The worker on the shared task queue and its twin on this worker's own queue, run together.

    Used like a temporalio `Worker`: `await run()`, `await shutdown()`, or `async with`.
    """

    def __init__(
        self, shared: Worker, own: Worker, worker_queue: str, tools: ToolActivities, mcp: McpTools
    ) -> None:
        self.shared = shared
        self.own = own
        self.worker_queue = worker_queue
        self.tools = tools
        self.mcp = mcp
        """The MCP servers' tools, offered once they are connected (before polling starts)."""
        """Closed once both workers stopped (a terminal's shell ends with its worker)."""
        """The task queue only this worker polls."""
        self._running = contextlib.AsyncExitStack()

    async def run(self) -> None:
        """Connect to the MCP servers, then poll both queues until shut down (one failing stops the other)."""
        try:
            await self.mcp.start()
            async with asyncio.TaskGroup() as group:
                group.create_task(self.shared.run())
                group.create_task(self.own.run())
        finally:
            await self.mcp.close()
            await self.tools.close()

    async def shutdown(self) -> None:
        """Stop polling and finish what is running."""
        try:
            await self.own.shutdown()
        finally:
            await self.shared.shutdown()

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:  # one failing to start stops the other
            await self.mcp.start()
            stack.push_async_callback(self.mcp.close)
            await stack.enter_async_context(self.shared)
            await stack.enter_async_context(self.own)
            self._running = stack.pop_all()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            await self._running.__aexit__(kind, error, trace)  # the own queue's worker stops first
        finally:
            await self.tools.close()


class McpTools:
    """The declared MCP servers of one worker: connected before it polls, their tools then offered
    to the tool activities (to run) and the agent activities (to declare to models)."""

    def __init__(self, servers: McpServers, tools: ToolActivities, agents: AgentActivities) -> None:
        self.servers, self._tools, self._agents = servers, tools, agents
        self._started = False

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        await self.servers.start()
        self._tools.tools.update(self.servers.tools())
        self._agents.tools.update(self.servers.descriptors())

    async def close(self) -> None:
        await self.servers.close()


def workflow_runner(
    converter: DataConverter, *, sandbox: bool = True, debug: bool | None = None
) -> WorkflowRunner:
    """How workflow code runs: in the sandbox (`WORKFLOW_RUNNER`) or not (`UNSANDBOXED`), with the
    payloads' context questions answered outside it when `converter` takes no context
    (`core.runner`).

    In the SDK's debug mode (`debug`; by default the SDK's own switch, `TEMPORAL_DEBUG`) the runner
    is not wrapped: the SDK opens its sandbox to `breakpoint()` and debugpy only when it sees its
    own sandboxed runner. A caller that passes `debug_mode=True` to its `Worker` passes
    `debug=True` here too.
    """
    runner = WORKFLOW_RUNNER if sandbox else UNSANDBOXED
    if debug is None:
        debug = bool(os.environ.get("TEMPORAL_DEBUG"))
    return ContextFree(runner) if takes_no_context(converter) and not debug else runner


def own_queue_name(shared_queue: str) -> str:
    """A task queue name nobody else uses, telling operators where it lives."""
    return f"{shared_queue}@{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def build_worker(
    client: Client,
    settings: Settings,
    *,
    task_queue: str | None = None,
    tools: ToolActivities | None = None,
    directory: AgentDirectory | None = None,
) -> SynapseWorker:
    """A worker for all Synapse workflows and activities (the client must use the pydantic converter);
    `tools` and `directory` replace the ones the settings would give."""
    prepare_parser()
    tools = tools or ToolActivities(settings)
    shared_queue = task_queue or settings.temporal.task_queue
    tools.worker_queue = own_queue_name(shared_queue)
    agents = AgentActivities(settings, assess=tools.assess_tool_call)
    mcp = McpServers(load_registry(settings).mcp_servers, settings.data_dir, settings.limits.max_json_depth)
    activities: list[Callable[..., Any]] = [
        *agents.activities(),
        *(directory or AgentDirectory(settings)).activities(),
        *tools.activities(),
        *ChatDelivery(settings).activities(),
        *WebhookActivities(settings).activities(),
        *ArchiveActivities(ArtifactStore.from_settings(settings)).activities(),
        *WholeOutputActivities(ArtifactStore.from_settings(settings)).activities(),
        *ExperienceActivities(agents.context.index).activities(),  # one index (one pool) per worker
    ]
    shared = Worker(
        client,
        task_queue=shared_queue,
        workflows=list(WORKFLOWS),
        activities=activities,
        workflow_runner=workflow_runner(client.data_converter, sandbox=settings.temporal.workflow_sandbox),
        max_concurrent_workflow_tasks=settings.temporal.worker_workflow_slots,
        max_cached_workflows=settings.temporal.worker_cached_workflows,
        max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
        max_concurrent_activities=settings.temporal.activity_slots,
        max_concurrent_workflow_task_polls=settings.temporal.worker_workflow_pollers,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=settings.temporal.sticky_seconds),
        max_concurrent_activity_task_polls=settings.temporal.worker_activity_pollers,
    )
    allow_slow_activations(shared)
    own = Worker(
        client,
        task_queue=tools.worker_queue,
        activities=[tools.run_tool],
        max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
    )
    return SynapseWorker(shared, own, tools.worker_queue, tools, McpTools(mcp, tools, agents))


def allow_slow_activations(worker: Worker, seconds: float = DEADLOCK_SECONDS) -> None:
    """Let `worker`'s workflow activations run `seconds` before they count as deadlocked.

    The SDK has no option for this (only `debug_mode`, which turns detection off and runs
    workflows on the event loop's thread), so its workflow worker's limit is set here; an SDK
    that no longer has it fails loudly rather than silently keeping 2 s. A worker in debug mode
    (no limit) is left without one.
    """
    workflows = worker._workflow_worker  # no public setting exists
    if workflows is None:
        return
    if not hasattr(workflows, "_deadlock_timeout_seconds"):
        raise RuntimeError("this temporalio version has no deadlock timeout to set; see DEADLOCK_SECONDS")
    if workflows._deadlock_timeout_seconds is not None:
        workflows._deadlock_timeout_seconds = seconds  # type: ignore[assignment]


async def run_worker(settings: Settings) -> None:
    """Connect and run the worker until cancelled (a chat channel that cannot work stops it first)."""
    from core.connect import connect_client, metrics_runtime
    from core.tracing import Tracing

    settings.dingtalk.check()
    tools = ToolActivities(settings)
    await asyncio.to_thread(tools.prepare)
    if settings.lark.enabled:
        # lark-oapi takes ~7 s to import here; pay it at start, not on the first card.
        await asyncio.to_thread(importlib.import_module, "lark_oapi")
    tracing = Tracing.from_env("synapse-worker")
    client = await connect_client(settings, runtime=metrics_runtime(settings), tracing=tracing)
    if settings.temporal.worker_metrics_address:
        log.info("worker metrics at http://%s/metrics", settings.temporal.worker_metrics_address)
    if tracing is not None:
        log.info("worker traces to the OTLP endpoint of OTEL_EXPORTER_OTLP_*")
    worker = build_worker(client, settings, tools=tools)
    log.info(
        "worker polling task queues %r and %r (its own)", settings.temporal.task_queue, worker.worker_queue
    )
    try:
        await worker.run()
    finally:
        if tracing is not None:
            tracing.shutdown()


if __name__ == "__main__":
    from core.logs import configure_logging

    settings = Settings()
    configure_logging(settings)
    try:
        asyncio.run(run_worker(settings))
    except KeyboardInterrupt:
        pass
