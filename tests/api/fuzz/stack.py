"""The fuzzed stack: a dev server, a worker and the app on uvicorn, without and with API keys."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from api.main import create_app
from core.connect import synapse_converter
from core.settings import ApiSettings, Settings, TemporalSettings
from tests.support import dev_server, running
from worker import build_worker

KEY = "fuzz-admin-key"
"""The admin key of the app with keys on (schemathesis sends it; it also tries without)."""
KEYS = f"sha256:{hashlib.sha256(KEY.encode()).hexdigest()}:fuzz-admin:admin"
"""`SYNAPSE_API_KEYS` of that app: the key's digest, as a deployment stores it."""


@dataclass(frozen=True)
class Stack:
    """Where the two apps listen; both share one worker, one dev server and one data dir."""

    open_url: str
    keyed_url: str
    data_dir: Path


@asynccontextmanager
async def fuzzed_stack(data_dir: Path) -> AsyncIterator[Stack]:
    """Start everything on loopback with `data_dir` as its state; stop it all afterwards."""
    settings = Settings(
        data_dir=data_dir,
        temporal=TemporalSettings(task_queue=f"fuzz-{uuid.uuid4().hex[:8]}"),
        _env_file=None,
    )
    keyed = settings.model_copy(update={"api": ApiSettings(keys=KEYS)})
    async with (
        dev_server(synapse_converter(settings)) as env,
        build_worker(env.client, settings),
        running(create_app(settings, client=env.client)) as open_url,
        running(create_app(keyed, client=env.client)) as keyed_url,
    ):
        yield Stack(open_url=open_url, keyed_url=keyed_url, data_dir=data_dir)
