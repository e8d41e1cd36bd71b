"""A graph's status reads answer during its wide fan-out (issue 48: a 300-wide fan-out's graph
task waited 10 s on its worker's sticky queue, and reads answered 503 "no worker")."""

from __future__ import annotations

import httpx
import pytest

from ..conftest import assert_progressing
from ..workflows.graph.flows import task

WIDTH = 200


@pytest.mark.slow(seconds=90)
async def test_reads_answer_throughout_a_wide_fan_out(http: httpx.AsyncClient) -> None:
    blueprint = {"new_tasks": [task(f"t{i}", input_data={"echo": i}) for i in range(WIDTH)]}
    created = await http.post("/graphs", json={"blueprint": blueprint})
    assert created.status_code == 201, created.text
    graph_id = created.json()["graph_id"]
    refused: list[str] = []

    async def read() -> dict[str, int]:
        response = await http.get(f"/graphs/{graph_id}", params={"limit": 1})
        if response.status_code != 200:
            refused.append(f"{response.status_code} {response.text}")
            return {}
        counts: dict[str, int] = response.json()["counts"]
        return counts

    done = await assert_progressing(
        read, lambda counts: counts.get("completed", 0), WIDTH, interval=0.05, what="the fan-out"
    )

    assert not refused, refused  # each read answered within the API's own wait (10 s)
    assert done == {"completed": WIDTH}
