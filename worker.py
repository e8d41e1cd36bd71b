"""Builds the Temporal worker: every workflow and activity on one task queue.

`python worker.py` (or `synapse worker`) runs it against the Temporal chosen the standard
way (envconfig profile or TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY / TLS).
Run more of them to scale out.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.agents.directory import AgentDirectory
from activities.agents.step import AgentActivities
from activities.artifacts.archive import ArchiveActivities
from activities.channels.lark.delivery import LarkActivities
from activities.channels.webhook.delivery import WebhookActivities
from activities.experience.index import ExperienceActivities
from activities.tools.runner import ToolActivities
from core.artifacts import ArtifactStore
from core.experience import ExperienceIndex
from core.settings import Settings
from workflows.graph import AgentTaskWorkflow, TaskGraphWorkflow
from workflows.session import SessionWorkflow

log = logging.getLogger("synapse.worker")

WORKFLOWS: Sequence[type] = (SessionWorkflow, TaskGraphWorkflow, AgentTaskWorkflow)

WORKFLOW_RUNNER = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules("workflows", "contracts", "celpy")
)
"""The sandbox still checks every run, but our own workflow modules are imported once.

Re-importing `workflows/` into a fresh sandbox for every run took about a third of the worker's
CPU per session start (bench/many: 67 ms CPU and 24 starts/s; passing it through: ~30 ms CPU per
start). Safe because these modules hold no mutable module-level state; keep it that way.
`celpy` (graph conditions) is passed through too: it does no I/O, and the sandbox cannot import
its date library.
"""


def build_worker(
    client: Client, settings: Settings, *, task_queue: str | None = None, tools: ToolActivities | None = None
) -> Worker:
    """A worker for all Synapse workflows and activities (the client must use the pydantic converter)."""
    tools = tools or ToolActivities(settings)
    activities: list[Callable[..., Any]] = [
        *AgentActivities(settings).activities(),
        *AgentDirectory(settings).activities(),
        *tools.activities(),
        *LarkActivities(settings).activities(),
        *WebhookActivities(settings).activities(),
        *ArchiveActivities(ArtifactStore.from_settings(settings)).activities(),
        *ExperienceActivities(ExperienceIndex.for_data_dir(settings.data_dir)).activities(),
    ]
    return Worker(
        client,
        task_queue=task_queue or settings.temporal.task_queue,
        workflows=list(WORKFLOWS),
        activities=activities,
        workflow_runner=WORKFLOW_RUNNER,
    )


async def run_worker(settings: Settings) -> None:
    """Connect and run the worker until cancelled."""
    from core.connect import connect_client

    tools = ToolActivities(settings)
    await asyncio.to_thread(tools.prepare)
    if settings.lark.enabled:
        # lark-oapi takes ~7 s to import here; pay it at start, not on the first card.
        await asyncio.to_thread(importlib.import_module, "lark_oapi")
    client = await connect_client(settings)
    worker = build_worker(client, settings, tools=tools)
    log.info("worker polling task queue %r", settings.temporal.task_queue)
    await worker.run()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_worker(Settings()))
    except KeyboardInterrupt:
        pass
