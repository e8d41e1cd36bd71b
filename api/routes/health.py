"""`GET /healthz`: the API is up and Temporal answers. `GET /readyz`: and a worker serves Synapse's
task queue, so a message sent now is processed (the embedded `synapse up` waits for it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response

from contracts import Readiness
from core.workers import workflow_pollers

from ..deps import ClientDep, SettingsDep, Viewer
from ..errors import ERROR_RESPONSES
from ..metrics import CONTENT_TYPE

router = APIRouter(tags=["health"])


def _unreachable(err: Exception) -> HTTPException:
    return HTTPException(503, f"Temporal is not reachable: {err}")


@router.get(
    "/healthz",
    responses=ERROR_RESPONSES(503, s503="Temporal is not reachable; `detail` says why."),
)
async def healthz(client: ClientDep, request: Request) -> dict[str, Any]:
    """Liveness: 200 with the Temporal namespace when Temporal is reachable, else 503.

    With the DingTalk channel on, `channels.dingtalk` says how its Stream connection is
    (`state`: connecting, open, reconnecting, stopped; `connections_opened`; `last_error`).
    """
    try:
        await client.service_client.check_health()
    except Exception as err:  # any failure means "not healthy"; say why
        raise _unreachable(err) from err
    health: dict[str, Any] = {"status": "ok", "namespace": client.namespace}
    if getattr(request.app.state, "dingtalk_stream", None) is not None:
        from ..dingtalk.routes import status

        health["channels"] = {"dingtalk": status(request.app)}
    return health


@router.get(
    "/readyz",
    response_model=Readiness,
    responses=ERROR_RESPONSES(
        503,
        s503="Not ready: no worker polls Synapse's task queue yet (messages would wait in the queue), "
        "or Temporal is not reachable; `detail` says which.",
    ),
)
async def readyz(client: ClientDep, settings: SettingsDep) -> Readiness:
    """Readiness: 200 once a worker polls Synapse's task queue (SYNAPSE_TASK_QUEUE), 503 before.

    `/healthz` only says the API and Temporal are up; a message sent before a worker polls waits in
    the queue until one does. Temporal keeps listing a worker for a few minutes after its last poll.
    """
    task_queue = settings.temporal.task_queue
    try:
        workers = await workflow_pollers(client, task_queue)
    except Exception as err:  # any failure means "not ready"; say why
        raise _unreachable(err) from err
    if workers == 0:
        raise HTTPException(
            503,
            f"not ready: no worker polls task queue {task_queue!r} in namespace {client.namespace!r} "
            "yet, so messages would wait; start one with `synapse worker` (same SYNAPSE_TASK_QUEUE), "
            "or wait for `synapse up` to say it is ready",
        )
    return Readiness(namespace=client.namespace, task_queue=task_queue, workers=workers)


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE: {}}, "description": "Prometheus' text format."},
        **ERROR_RESPONSES(401, 403),
    },
)
async def metrics(request: Request, caller: Viewer) -> Response:
    """The API's Prometheus metrics (`api/metrics.py`): requests by route and status, decisions by
    outcome and channel. The worker's (workflows, tools, Temporal's SDK) are at SYNAPSE_WORKER_METRICS_ADDRESS."""
    return Response(request.app.state.metrics.exposition(), media_type=CONTENT_TYPE)
