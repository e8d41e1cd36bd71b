"""`synapse pending`, the real command against a real API and worker: every request the caller may
answer, in sessions and graphs, and none that names other approvers."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx

from ..api.test_sessions import new_key
from ..conftest import assert_eventually
from ..support import free_port

SYNAPSE = str(Path(sys.executable).parent / "synapse")
GATED = {
    "new_tasks": [
        {
            "task_id": "report",
            "assignee_id": "Agent:demo",
            "input_data": {"echo": "done"},
            "directives": {"human_interaction": {"prompt": "Write the report?"}},
        }
    ]
}


async def synapse(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        SYNAPSE, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def waiting(http: httpx.AsyncClient, path: str) -> None:
    await assert_eventually(
        lambda: http.get(path),
        lambda r: r.status_code == 200 and bool(r.json()["pending_interactions"]),
        what=f"a request waiting in {path}",
        within=60,
    )


async def test_every_request_for_the_caller_is_listed_with_where_to_decide_it(
    http: httpx.AsyncClient,
) -> None:
    mine, bobs = new_key(), new_key()
    sent = await http.post(
        f"/sessions/{mine}/messages",
        json={"content": "DELETE FROM orders WHERE id = 3", "principal": "alice"},
    )
    assert sent.status_code == 202, sent.text
    created = await http.post("/sessions", json={"session_key": bobs, "approvers": ["bob"]})
    assert created.status_code == 201, created.text
    await http.post(f"/sessions/{bobs}/messages", json={"content": "DELETE FROM orders WHERE id = 4"})
    graph = (await http.post("/graphs", json={"blueprint": GATED})).json()["graph_id"]
    for path in (f"/sessions/{mine}", f"/sessions/{bobs}", f"/graphs/{graph}"):
        await waiting(http, path)
    await assert_eventually(
        lambda: http.get("/graphs"),
        lambda r: any(g["graph_id"] == graph and g["pending"] for g in r.json()),
        what="the graph listed as waiting",
    )
    api = str(http.base_url).rstrip("/")

    code, out, err = await synapse("pending", "--api", api, "--principal", "alice")

    assert code == 0, err
    assert f"  session {mine} · tool_1 · sql: DELETE FROM orders WHERE id = 3\n" in out
    assert f"      decide: POST /sessions/{mine}/interactions/tool_1\n" in out
    assert f"  graph {graph} · gate_1 · graph task report: Write the report?\n" in out
    assert f"      decide: POST /graphs/{graph}/interactions/gate_1\n" in out
    assert bobs not in out, "bob's request names bob alone"

    code, out, _ = await synapse("pending", "--api", api, "--principal", "bob", "--json")
    listed = {(w["owner"], w["interaction_id"]) for w in json.loads(out)}
    assert {
        (f"session {bobs}", "tool_1"),
        (f"session {mine}", "tool_1"),
        (f"graph {graph}", "gate_1"),
    } <= listed


async def test_an_api_that_cannot_be_reached_exits_5() -> None:
    code, _, err = await synapse("pending", "--api", f"http://127.0.0.1:{free_port()}")
    assert code == 5 and "could not be reached" in err, err
