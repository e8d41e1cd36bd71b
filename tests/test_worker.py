"""The worker's own settings: how many workflow tasks it runs at once."""

from __future__ import annotations

import os

import pytest
from temporalio.client import Client

from cli.main import main
from core.settings import Settings, TemporalSettings
from worker import DEADLOCK_SECONDS, build_worker


@pytest.mark.parametrize(("slots", "expected"), [(None, 8 * (os.cpu_count() or 1)), (3, 3)])
async def test_a_worker_runs_as_many_workflow_tasks_at_once_as_its_slots(
    client: Client, tmp_path: os.PathLike[str], task_queue: str, slots: int | None, expected: int
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue, workflow_slots=slots),
        _env_file=None,
    )

    worker = build_worker(client, settings)

    assert worker.shared.config().get("max_concurrent_workflow_tasks") == expected


@pytest.mark.parametrize(
    ("variable", "option", "default"),
    [
        ("SYNAPSE_ACTIVITY_SLOTS", "max_concurrent_activities", None),
        ("SYNAPSE_WORKFLOW_POLLERS", "max_concurrent_workflow_task_polls", 5),
        ("SYNAPSE_ACTIVITY_POLLERS", "max_concurrent_activity_task_polls", 5),
    ],
)
async def test_a_deployment_tunes_the_workers_slots_and_pollers_by_environment(
    client: Client,
    tmp_path: os.PathLike[str],
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    option: str,
    default: int | None,
) -> None:
    monkeypatch.setenv("SYNAPSE_TASK_QUEUE", task_queue)
    monkeypatch.setenv("SYNAPSE_DATA_DIR", str(tmp_path))
    untuned = build_worker(client, Settings(_env_file=None))
    monkeypatch.setenv(variable, "7")
    monkeypatch.setenv("SYNAPSE_TASK_QUEUE", f"{task_queue}-tuned")  # one worker per queue and process
    tuned = build_worker(client, Settings(_env_file=None))

    assert untuned.shared.config().get(option) == default, "the SDK's default when unset"
    assert tuned.shared.config().get(option) == 7


def test_zero_slots_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SYNAPSE_WORKFLOW_SLOTS", "0")

    assert main(["worker"]) == 2

    assert "SYNAPSE_WORKFLOW_SLOTS='0': Input should be greater than 0" in capsys.readouterr().err


async def test_a_worker_lets_workflow_activations_run_past_the_sdks_two_seconds(
    client: Client, tmp_path: os.PathLike[str], task_queue: str
) -> None:
    """What that limit does to a workflow is shown in tests/faults/test_starved_queries.py; here,
    that the worker Synapse runs has it (the SDK keeps it in its workflow worker)."""
    settings = Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)

    worker = build_worker(client, settings)

    workflows = worker.shared._workflow_worker
    assert workflows is not None and workflows._deadlock_timeout_seconds == DEADLOCK_SECONDS > 2
