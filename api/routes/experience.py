"""Experience recall: what an agent with `experience_config` would be reminded of."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from contracts import ExperienceMatch

from ..deps import ExperienceDep, Viewer
from ..errors import ERROR_RESPONSES

router = APIRouter(prefix="/experience", tags=["experience"])


@router.get("", response_model=list[ExperienceMatch], responses=ERROR_RESPONSES(401, 403, 422))
async def recall(
    index: ExperienceDep,
    caller: Viewer,
    query: Annotated[str, Query(max_length=2000, description="Free text; words are matched, not syntax.")],
    top_k: Annotated[int, Query(ge=1, le=50, description="At most this many matches.")] = 3,
    agent_id: Annotated[str | None, Query(max_length=200, description="Only this agent's turns.")] = None,
) -> list[ExperienceMatch]:
    """Past turns matching `query`, best first: who asked, when, which agent, how it ended. A key
    that names projects recalls only turns of sessions in those projects."""
    return await asyncio.to_thread(index.search, query, top_k, agent_id=agent_id, projects=caller.projects)
