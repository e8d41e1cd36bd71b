"""The README runner on its own, against a small loopback app: what makes a block fail."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse, StreamingResponse

from ..support import running
from .blocks import Block
from .runner import Ports, localize, run_section


def app() -> FastAPI:
    """`/ok` answers 200, `/missing` 404, `/stream` a line and then nothing for a minute."""
    api = FastAPI()

    @api.get("/ok")
    async def ok() -> dict[str, str]:
        return {"status": "waiting"}

    @api.get("/missing")
    async def missing() -> JSONResponse:
        return JSONResponse({"detail": "no such thing"}, status_code=404)

    @api.get("/stream")
    async def stream() -> StreamingResponse:
        async def lines() -> AsyncIterator[str]:
            yield "event: hello\n\n"
            await asyncio.sleep(60)

        return StreamingResponse(lines(), media_type="text/event-stream")

    return api


@pytest.fixture
async def ports() -> AsyncIterator[Ports]:
    async with running(app()) as base:
        yield Ports(api=int(base.rsplit(":", 1)[1]), ui=1)


def block(code: str) -> Block:
    return Block(section="S", line=1, code=code)


async def run(ports: Ports, tmp_path: Path, *codes: str) -> list[str]:
    return await run_section(
        [block(code) for code in codes], ports, cwd=tmp_path, log=tmp_path / "s.log", within=20
    )


async def test_blocks_share_one_shell_and_pass_when_they_print_what_they_say(
    ports: Ports, tmp_path: Path
) -> None:
    found = await run(
        ports,
        tmp_path,
        "A=$(curl -s http://127.0.0.1:8000/ok)\n",
        'echo "$A"   # → "status": "waiting"\n',
        "curl -sN --max-time 3 http://127.0.0.1:8000/stream   # → event: hello\n",  # (1 s was too short on a loaded machine: curl gave up before the first line, HTTP 000)
        "curl -s -w ' %{http_code}\\n' http://127.0.0.1:8000/missing   # → no such thing … 404\n",
    )
    assert found == []


@pytest.mark.parametrize(
    ("code", "why"),
    [
        ("curl -s http://127.0.0.1:8000/missing\n", "curl was answered HTTP 404"),
        ("curl -s -w '\\n' http://127.0.0.1:8000/missing\n", "curl was answered HTTP 404"),
        (
            'curl -s http://127.0.0.1:8000/ok   # → "status": "done"\n',
            'its output lacks `# → "status": "done"',
        ),
        ("false\necho never\n", "stopped: a command failed with exit status 1"),
        ("echo $UNSET_IN_THE_README\n", "stopped: a command failed with exit status 1"),
        ("sleep 30\n", "did not finish within 2 s"),
    ],
)
async def test_a_block_fails_on_an_error_status_a_missing_line_a_failed_command_or_time(
    ports: Ports, tmp_path: Path, code: str, why: str
) -> None:
    found = await run_section(
        [block(code), block("echo after\n")], ports, cwd=tmp_path, log=tmp_path / "s.log", within=2
    )
    assert len(found) == 1 and f"README.md:1 (S): {why}" in found[0], found


def test_the_readme_ports_are_the_test_stack_s_and_no_other_spelling_gets_through() -> None:
    ports = Ports(api=41000, ui=41001)
    assert localize("curl http://127.0.0.1:8000/a; open http://127.0.0.1:8233\n", ports) == (
        "curl http://127.0.0.1:41000/a; open http://127.0.0.1:41001\n"
    )
    with pytest.raises(ValueError, match="port 8000"):
        localize("curl http://localhost:8000/a\n", ports)
