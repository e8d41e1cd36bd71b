"""`GET /readyz`: 503 until a worker polls Synapse's task queue, 200 once one does."""

from __future__ import annotations

import httpx
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings
from worker import build_worker

from ..conftest import assert_eventually
from ..support import serve


async def test_not_ready_without_a_worker_ready_with_one(client: Client, settings: Settings) -> None:
    task_queue = settings.temporal.task_queue  # fresh for this test: nobody has polled it
    async with serve(create_app(settings, client=client)) as http:
        healthy = await http.get("/healthz")
        assert healthy.status_code == 200, "the API and Temporal are up all the same"

        waiting = await http.get("/readyz")
        assert waiting.status_code == 503, waiting.text
        detail = waiting.json()["detail"]
        assert f"no worker polls task queue {task_queue!r}" in detail and "synapse worker" in detail

        async with build_worker(client, settings):
            ready = await assert_eventually(
                lambda: http.get("/readyz"), lambda r: r.status_code == 200, what="GET /readyz 200"
            )
    assert ready.json() == {
        "status": "ready",
        "namespace": client.namespace,
        "task_queue": task_queue,
        "workers": ready.json()["workers"],
    }
    assert ready.json()["workers"] >= 1


async def test_the_openapi_document_says_what_readiness_answers(http: httpx.AsyncClient) -> None:
    paths = (await http.get("/openapi.json")).json()["paths"]
    ready = paths["/readyz"]["get"]["responses"]
    assert set(ready) == {"200", "503"}
    assert ready["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Readiness"}
    assert ready["503"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    assert "worker" in ready["503"]["description"]
    assert set(paths["/healthz"]["get"]["responses"]) == {"200", "503"}
