"""`synapse history export` writes a history that `Replayer` replays."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, Worker

from cli.main import main

from .wf_fixture import ShoutWorkflow, shout


@pytest.fixture
def temporal_address(client: Client, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point the CLI at the shared dev server (and away from any personal Temporal profile)."""
    address = client.service_client.config.target_host
    for name in [n for n in os.environ if n.startswith("TEMPORAL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TEMPORAL_ADDRESS", address)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", os.devnull)
    return address


async def test_exported_history_replays(
    client: Client, task_queue: str, temporal_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow_id = f"shout-{uuid.uuid4()}"
    async with Worker(client, task_queue=task_queue, workflows=[ShoutWorkflow], activities=[shout]):
        result = await client.execute_workflow(ShoutWorkflow.run, "hi", id=workflow_id, task_queue=task_queue)
    assert result == "HI"
    path = tmp_path / "histories" / "shout.json"

    # main() runs its own event loop, so it gets a thread of its own here.
    code = await asyncio.to_thread(main, ["history", "export", workflow_id, str(path)])

    assert code == 0, capsys.readouterr().err
    history = WorkflowHistory.from_json(workflow_id, path.read_text())
    assert len(history.events) >= 11  # started, 3 workflow tasks, scheduled/started/completed, completed
    assert (
        capsys.readouterr().out.strip() == f"wrote {len(history.events)} events of {workflow_id!r} to {path}"
    )
    replayer = Replayer(workflows=[ShoutWorkflow], data_converter=pydantic_data_converter)
    replay = await replayer.replay_workflow(history)
    assert replay.replay_failure is None


async def test_export_of_a_given_run(
    client: Client, task_queue: str, temporal_address: str, tmp_path: Path
) -> None:
    workflow_id = f"shout-{uuid.uuid4()}"
    async with Worker(client, task_queue=task_queue, workflows=[ShoutWorkflow], activities=[shout]):
        handle = await client.start_workflow(ShoutWorkflow.run, "a", id=workflow_id, task_queue=task_queue)
        await handle.result()
    path = tmp_path / "run.json"

    code = await asyncio.to_thread(
        main, ["history", "export", workflow_id, str(path), "--run-id", handle.result_run_id or ""]
    )

    assert code == 0
    await Replayer(workflows=[ShoutWorkflow]).replay_workflow(
        WorkflowHistory.from_json(workflow_id, path.read_text())
    )


async def test_unknown_workflow_is_one_line_and_exit_1(
    temporal_address: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "missing.json"

    code = await asyncio.to_thread(main, ["history", "export", "no-such-workflow", str(path)])

    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: workflow 'no-such-workflow' not found in namespace 'default'")
    assert err.count("\n") == 1
    assert not path.exists()


async def test_unreachable_temporal_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ..support import free_ports

    (port,) = free_ports(1)
    monkeypatch.setenv("TEMPORAL_ADDRESS", f"127.0.0.1:{port}")
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", os.devnull)

    code = await asyncio.to_thread(main, ["history", "export", "wf", str(tmp_path / "x.json")])

    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"error: cannot reach Temporal at 127.0.0.1:{port}")
    assert err.count("\n") == 1
