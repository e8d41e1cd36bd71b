"""`GET /healthz`: the API is up and Temporal answers."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException

from ..deps import ClientDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(client: ClientDep) -> dict[str, str]:
    """200 with the Temporal namespace when Temporal is reachable, else 503."""
    try:
        await client.service_client.check_health()
    except Exception as err:  # any failure means "not healthy"; say why
        raise HTTPException(503, f"Temporal is not reachable: {err}") from err
    return {"status": "ok", "namespace": client.namespace}
