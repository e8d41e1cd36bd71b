"""`GET /me`: who the caller's key makes them, so a client hides what they may not do."""

from __future__ import annotations

from fastapi import APIRouter, Request

from contracts import CallerView

from ..deps import Viewer

router = APIRouter(tags=["access"])


@router.get("/me", response_model=CallerView)
async def me(caller: Viewer, request: Request) -> CallerView:
    """The principal, role and projects of the key sent (any role may ask); with keys off, `admin`,
    no principal (callers then name themselves) and no projects (every one)."""
    return CallerView(
        principal=caller.principal,
        role=caller.role.name,
        keys_required=request.app.state.api_keys is not None,
        projects=sorted(caller.projects) if caller.projects is not None else None,
    )
