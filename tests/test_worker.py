"""The worker's own settings: how many workflow tasks it runs at once, its pollers, its sandbox."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest
from temporalio.client import Client
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from api.calls import sessions as session_calls
from cli.main import main
from contracts import InboundMessage, SessionConfig
from core.agent_registry import BUILTIN_AGENTS
from core.runner import ContextFree
from core.settings import Settings, TemporalSettings
from tests.conftest import assert_eventually
from worker import DEADLOCK_SECONDS, WORKFLOW_RUNNER, build_worker
from workflows.identity.ids import session_workflow_id
from workflows.session import SessionWorkflow

from .decisions import decided


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


@pytest.mark.parametrize(
    ("value", "expected"), [(None, timedelta(seconds=10)), ("0.5", timedelta(seconds=0.5))]
)
async def test_a_workers_sticky_queue_holds_a_task_for_its_setting(
    client: Client,
    tmp_path: os.PathLike[str],
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    value: str | None,
    expected: timedelta,
) -> None:
    """Past it any worker may take the task (the SDK's 10 s by default: shorter replays more under
    load; the wide fan-out's stall is removed by starting runs 25 at a time, issue 48)."""
    monkeypatch.setenv("SYNAPSE_TASK_QUEUE", task_queue)
    monkeypatch.setenv("SYNAPSE_DATA_DIR", str(tmp_path))
    if value is not None:
        monkeypatch.setenv("SYNAPSE_STICKY_SECONDS", value)

    worker = build_worker(client, Settings(_env_file=None))

    assert worker.shared.config().get("sticky_queue_schedule_to_start_timeout") == expected


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SYNAPSE_WORKFLOW_SLOTS", "0", "Input should be greater than 0"),
        ("SYNAPSE_STICKY_SECONDS", "0", "Input should be greater than 0"),
        ("SYNAPSE_WORKFLOW_SANDBOX", "maybe", "Input should be a valid boolean"),
    ],
)
def test_a_bad_worker_setting_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    expected: str,
) -> None:
    monkeypatch.setenv(variable, value)

    assert main(["worker"]) == 2

    assert f"{variable}={value!r}: {expected}" in capsys.readouterr().err


async def test_a_worker_lets_workflow_activations_run_past_the_sdks_two_seconds(
    client: Client, tmp_path: os.PathLike[str], task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What that limit does to a workflow is shown in tests/faults/test_starved_queries.py; here,
    that the worker Synapse runs has it (the SDK keeps it in its workflow worker)."""
    monkeypatch.delenv("TEMPORAL_DEBUG", raising=False)  # the SDK's debug mode has no limit
    settings = Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)

    worker = build_worker(client, settings)

    workflows = worker.shared._workflow_worker
    assert workflows is not None and workflows._deadlock_timeout_seconds == DEADLOCK_SECONDS > 2


async def test_in_the_sdks_debug_mode_a_worker_runs_the_sdks_sandbox_without_a_deadlock_limit(
    client: Client, tmp_path: os.PathLike[str], task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`TEMPORAL_DEBUG=1` (docs/production.md): the SDK's runner, which the SDK opens to the
    debugger, and no limit on an activation that waits at a breakpoint."""
    monkeypatch.setenv("TEMPORAL_DEBUG", "1")
    settings = Settings(data_dir=tmp_path, temporal=TemporalSettings(task_queue=task_queue), _env_file=None)

    worker = build_worker(client, settings)

    assert worker.shared.config().get("workflow_runner") is WORKFLOW_RUNNER
    workflows = worker.shared._workflow_worker
    assert workflows is not None and workflows._deadlock_timeout_seconds is None
    assert "breakpoint" in _restricted_builtins(WORKFLOW_RUNNER)
    assert "breakpoint" not in _restricted_builtins(workflows._workflow_runner), "the SDK let the debugger in"


def _restricted_builtins(runner: object) -> set[str]:
    """The builtins a sandboxed runner refuses to workflow code."""
    assert isinstance(runner, SandboxedWorkflowRunner)
    builtins = runner.restrictions.invalid_module_members.children["__builtins__"]
    return set(builtins.children) | set(builtins.use)


@pytest.mark.parametrize("sandbox", ["true", "false"])
async def test_a_session_runs_its_turn_with_the_workflow_sandbox_on_or_off(
    client: Client,
    tmp_path: os.PathLike[str],
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    count_orders: Callable[[str], int],
    sandbox: str,
) -> None:
    monkeypatch.setenv("SYNAPSE_WORKFLOW_SANDBOX", sandbox)
    monkeypatch.setenv("SYNAPSE_TASK_QUEUE", task_queue)
    monkeypatch.delenv("TEMPORAL_DEBUG", raising=False)  # the SDK's debug mode gets its own runner
    settings = Settings(data_dir=tmp_path, _env_file=None)
    key = f"sandbox-{sandbox}-{uuid.uuid4().hex[:6]}"
    handle = client.get_workflow_handle(session_workflow_id(key))
    async with build_worker(client, settings) as worker:
        runner = worker.shared.config().get("workflow_runner")
        assert isinstance(runner, ContextFree), "Synapse's converter takes no serialization context"
        assert isinstance(runner.runner, SandboxedWorkflowRunner) is (sandbox == "true")
        config = SessionConfig(session_key=key, agent=BUILTIN_AGENTS["demo"])
        message = InboundMessage(content="DELETE FROM orders WHERE status = 'cancelled'", sender_id="alice")
        await session_calls.send_message(client, task_queue, config, message)
        pending = await assert_eventually(
            lambda: handle.query(SessionWorkflow.get_pending), bool, what="pending"
        )
        outcome = await handle.execute_update(
            SessionWorkflow.decide_checked,
            decided(interaction_id=pending[0].interaction_id, approved=True, principal="alice"),
        )
    assert outcome.approved and outcome.tool_result is not None and outcome.tool_result.ok, outcome
    assert count_orders("status = 'cancelled'") == 0, "the approved DELETE ran"
