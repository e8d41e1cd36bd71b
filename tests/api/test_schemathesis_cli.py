"""The schemathesis harness fails when it should: a route that answers 500, or a status it does not
document, is found and reported (the contract test and `make fuzz` rely on it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from ..support import running
from .schemathesis_cli import Run, run_schemathesis


def app_that(status_for_big: int) -> FastAPI:
    """One documented route: 200 for `n` below 10, `status_for_big` from 10 on."""
    app = FastAPI()

    @app.get("/square", responses={422: {"description": "not an integer"}})
    async def square(n: int) -> JSONResponse:
        return JSONResponse({"square": n * n}, status_code=200 if n < 10 else status_for_big)

    return app


async def fuzz(app: FastAPI, tmp_path: Path) -> Run:
    async with running(app) as base_url, asyncio.timeout(120):
        return await run_schemathesis(base_url, phases="coverage,fuzzing", examples=20, seed=7, cwd=tmp_path)


@pytest.mark.parametrize(("status", "check"), [(500, "Server error"), (418, "Undocumented status code")])
async def test_a_wrong_answer_fails_the_run_and_says_what(status: int, check: str, tmp_path: Path) -> None:
    run = await fuzz(app_that(status), tmp_path)
    assert not run.passed and run.returncode != 0
    assert run.failures >= 1 and run.cases > 0
    assert check in run.report and "/square" in run.report


async def test_a_route_that_keeps_its_contract_passes(tmp_path: Path) -> None:
    run = await fuzz(app_that(200), tmp_path)
    assert run.passed, run.report[-5000:]
    assert run.cases > 0 and run.failures == 0
