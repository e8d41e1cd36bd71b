"""The API keeps its contract: schemathesis, every check, against the live app (keys off and on).

The real app (uvicorn on loopback, a real worker, the shared dev server) is fuzzed from its own
`/openapi.json` by the `schemathesis` CLI; any finding (a 5xx, an undocumented status, a body
that contradicts the documented schema, data accepted or refused against the schema, auth not
enforced as documented) fails the test with schemathesis' report. The run with keys off skips
the coverage phase, which the run with keys on covers (see `FULL`). `schemathesis.toml` at the
repository root holds the one setting it is given (see there).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.main import create_app
from cli.main import main
from core.settings import ApiSettings, Settings, TemporalSettings
from worker import build_worker

from ..support import forget_other_tests_workflows, running
from .schemathesis_cli import run_schemathesis

KEY = "contract-admin-key"
EXAMPLES = 4
"""Examples per operation and phase: with the coverage phase, every route's statuses in well
under a minute (`make fuzz` runs thousands, with random seeds and realistic ids)."""
SEED = 20261122
QUERY_WAIT = 18.0


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One task queue and data directory for both runs: schemathesis reuses keys such as "0", so
    the second run reaches sessions the first one started (and cancelled)."""
    return Settings(
        data_dir=tmp_path_factory.mktemp("contract"),
        temporal=TemporalSettings(task_queue=f"tq-contract-{uuid.uuid4().hex[:8]}"),
        _env_file=None,
    )


@pytest.fixture(scope="session")
async def worker(temporal_env: WorkflowEnvironment, settings: Settings) -> AsyncIterator[None]:
    """One worker for both runs, for as long as the dev server they share, so every session either
    run started is still served when the other run reads it. xdist's work stealing may run the two
    far apart, with other modules between them: a worker per module then stopped before the second
    run, whose reads of session "0" waited for a task queue nobody polled and answered 503."""
    async with build_worker(temporal_env.client, settings):
        yield


FULL = "examples,coverage,fuzzing"
"""Every phase, for the run with keys on: the coverage phase (each parameter's boundaries and
each route's statuses, about two thirds of a run's time) needs to see the routes only once, and
with keys on they answer everything they answer with keys off, plus 401 and 403."""


@pytest.mark.parametrize(
    ("keys", "phases"),
    [
        pytest.param(False, "examples,fuzzing", id="keys-off", marks=pytest.mark.slow(seconds=20)),
        pytest.param(True, FULL, id="keys-on", marks=pytest.mark.slow(seconds=40)),
    ],
)
async def test_schemathesis_finds_nothing(
    client: Client, settings: Settings, worker: None, keys: bool, phases: str
) -> None:
    # Reads wait for the worker up to just under schemathesis' 20 s request timeout: on a loaded
    # machine a new graph's first query took more than the default 10 s, and the 503 that follows
    # (tested in tests/faults/test_worker_gone.py) is a finding for schemathesis.
    await forget_other_tests_workflows(client, settings.temporal.task_queue)
    api = ApiSettings(keys=f"{KEY}:contract-admin:admin" if keys else None, query_wait_seconds=QUERY_WAIT)
    app = create_app(settings.model_copy(update={"api": api}), client=client)
    async with running(app) as base_url, asyncio.timeout(600):
        run = await run_schemathesis(
            base_url, phases=phases, examples=EXAMPLES, seed=SEED, key=KEY if keys else None
        )
    assert run.passed, run.report[-20000:]


async def test_synapse_schema_writes_the_document_the_api_serves(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    assert main(["schema", str(tmp_path)]) == 0
    served = (await http.get("/openapi.json")).json()
    assert json.loads((tmp_path / "openapi.json").read_text()) == served
    errors = served["components"]["schemas"]["ErrorBody"]
    assert set(errors["properties"]) == {"detail", "errors"} and errors["required"] == ["detail"]
    assert "HTTPValidationError" not in served["components"]["schemas"]
    decide = served["paths"]["/sessions/{key}/interactions/{interaction_id}"]["post"]["responses"]
    assert {"200", "202", "400", "403", "404", "409", "413", "422", "503"} <= set(decide)
    assert "security" not in decide and "401" not in decide, "without API keys nothing asks for one"
