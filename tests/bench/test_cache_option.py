"""`python -m bench --cache N`: every worker of the rig keeps N workflows, Synapse's and the bare ones."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from temporalio.client import Client

from bench.__main__ import parse
from bench.harness import Harness, _bare_worker
from bench.report import RunInfo


def test_the_cache_is_an_option_and_the_table_says_it(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(["--only", "many", "--cache", "100"])
    assert args.cache == 100
    assert parse([]).cache is None
    header = RunInfo(mode="full", samples=2, warmup=0, sessions=500, concurrency=20, cache=100).header()
    assert "every worker caches 100 workflows" in header[0]
    with pytest.raises(SystemExit):
        parse(["--cache", "-1"])
    assert "--cache must be at least 0" in capsys.readouterr().err


async def test_every_worker_of_the_rig_gets_the_cache(client: Client, tmp_path: Path) -> None:
    server = cast(Any, SimpleNamespace(pid=0, client=client))  # the suite's dev server
    harness = Harness(server, tmp_path, cache=7)
    async with harness.stack("cache") as stack, stack.another_bare_worker():
        assert stack.settings.temporal.worker_cached_workflows == 7  # Synapse's worker was built with it
        assert stack.cache == 7  # and every bare worker of the stack
    assert _bare_worker(client, "cache-seven", 7).config().get("max_cached_workflows") == 7
    assert (
        _bare_worker(client, "cache-default").config().get("max_cached_workflows") == 1000
    )  # the SDK's default
