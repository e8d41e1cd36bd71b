"""Keys scoped to projects reach only their projects' sessions, graphs and artifacts: the check
every route with a session key, a graph id or an artifact id in its path passes first.

`in_scope` is a dependency of every router (`api/main.py`): for a key that names projects it looks
up the project of the workflow the path names (`calls.scope`) and answers 404, in the words of a
workflow that never existed, for one of another project or of none, before the route runs (so a
refused decision is not even recorded in another project's audit). A message to a session that
does not exist yet starts it, in the key's project (`POST /sessions/{key}/messages`). Unscoped keys
and an open API pass untouched. Listings filter by project themselves (`calls.scope.visible_to`).
An artifact out of the key's reach (`calls.scope.reaches_artifact`) is 404 as a missing one is.
"""

from __future__ import annotations

import asyncio
import re

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.security import HTTPBearer
from pydantic import BaseModel

from contracts.artifacts import ARTIFACT_ID_PATTERN
from contracts.session import SESSION_KEY_PATTERN
from core.artifacts import ArtifactNotFound, ArtifactStore
from core.artifacts.owners import ArtifactOwners
from core.security import ApiKeys, Caller

from .calls.ref import WorkflowRef
from .calls.scope import Owners, check, reaches_artifact

_BEARER = HTTPBearer(auto_error=False)
_SESSION_KEY = re.compile(SESSION_KEY_PATTERN)
_ARTIFACT_ID = re.compile(ARTIFACT_ID_PATTERN)
_NAMED_ARTIFACT = re.compile(r"art_[0-9a-f]{64}")
_GRAPH_ID = re.compile(r"^(graph:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def owners(request: Request) -> Owners:
    """The app's cache of workflows' projects (made with the first scoped request)."""
    state = request.app.state
    if getattr(state, "owners", None) is None:
        state.owners = Owners()
    found: Owners = state.owners
    return found


def artifact_owners(request: Request) -> ArtifactOwners:
    """The owners kept beside the app's artifact store (`core.artifacts.owners`, made with the app)."""
    found: ArtifactOwners = request.app.state.artifact_owners
    return found


async def artifact_in_reach(request: Request, caller: Caller, artifact_id: str) -> bool:
    """Whether `caller` may read the artifact (a missing one: True, its route says it is missing)."""
    if caller.projects is None:
        return True
    store: ArtifactStore = request.app.state.artifacts
    try:
        first = (await asyncio.to_thread(store.info, artifact_id)).owner_id
    except ArtifactNotFound:
        return True
    owned = await asyncio.to_thread(artifact_owners(request).of, artifact_id)
    return await reaches_artifact(request.app.state.client, owners(request), caller, owned, first)


async def check_named_artifacts(request: Request, caller: Caller, field: str, value: BaseModel) -> None:
    """422 naming an artifact that `value` names anywhere (a blueprint's `artifact_config`, ...)
    and `caller`'s key may not read, in the words of a missing one: an agent of the caller's
    project would read it for the key."""
    if caller.projects is None:
        return
    for artifact_id in sorted(set(_NAMED_ARTIFACT.findall(value.model_dump_json()))):
        if not await artifact_in_reach(request, caller, artifact_id):
            raise RequestValidationError(
                [{"loc": ("body", field), "msg": f"no artifact {artifact_id!r}", "type": "not_found"}]
            )


async def scoped_caller(request: Request) -> Caller | None:
    """The caller when its key names projects; None otherwise (no keys, no or an unknown key: the
    route's own dependency answers those)."""
    keys: ApiKeys | None = request.app.state.api_keys
    credentials = await _BEARER(request)
    if keys is None or credentials is None:
        return None
    caller = keys.caller(credentials.credentials)
    return caller if caller is not None and caller.projects is not None else None


def _target(request: Request) -> WorkflowRef | None:
    """The session or graph the path names (None: none, or a malformed one the route's validation
    refuses with a 422)."""
    params = request.path_params
    key, graph_id = params.get("key"), params.get("graph_id")
    if isinstance(key, str) and _SESSION_KEY.match(key):
        return WorkflowRef.session(key)
    if isinstance(graph_id, str) and _GRAPH_ID.match(graph_id):
        return WorkflowRef.graph(graph_id)
    return None


async def in_scope(request: Request) -> None:
    """404 for a scoped key asking about another project's session, graph or artifact (see the
    module)."""
    caller = await scoped_caller(request)
    artifact_id = request.path_params.get("artifact_id")
    if caller is not None and isinstance(artifact_id, str) and _ARTIFACT_ID.match(artifact_id):
        if not await artifact_in_reach(request, caller, artifact_id):
            raise HTTPException(404, f"no artifact {artifact_id!r}")
        return
    target = _target(request) if caller is not None else None
    if caller is None or target is None:
        return
    starts = (
        request.method == "POST" and request.url.path.endswith("/messages") and "key" in request.path_params
    )
    await check(request.app.state.client, owners(request), caller, target, may_start=starts)
