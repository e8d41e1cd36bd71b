"""`Annotated` dependencies: the Temporal client, settings, the calling principal, and the path
parameters several routes share (a session key, a graph id, an interaction id, ...)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from contracts import ARTIFACT_ID_PATTERN
from contracts.session import SESSION_KEY_PATTERN
from core.agent_registry import AgentRegistry
from core.artifacts import ArtifactStore
from core.experience import ExperienceIndex
from core.rules.store import RuleStore
from core.security import OPEN_ACCESS, ApiKeys, Caller, Role
from core.settings import Settings

from .sse import StreamHub

_BEARERS = {
    role: HTTPBearer(
        auto_error=False,
        scheme_name=role.name,
        description=f"An API key of role `{role.name}` or higher (`SYNAPSE_API_KEYS`), as "
        "`Authorization: Bearer <key>`.",
    )
    for role in Role
}
"""One security scheme per role, so the OpenAPI document names the role each operation needs."""


def _kept(name: str) -> Callable[[Request], Coroutine[Any, Any, Any]]:
    """A dependency returning what the app keeps as `app.state.<name>` (set at build or start).

    `async` although it awaits nothing: FastAPI runs a plain function dependency in a worker
    thread, a hand-off that cost more than the request's own work before its route ran.
    """

    async def kept(request: Request) -> Any:
        return getattr(request.app.state, name)

    kept.__doc__ = f"`app.state.{name}`"
    return kept


get_client = _kept("client")
"""The Temporal client created once in the lifespan."""
get_hub = _kept("hub")
"""The stream hub created in the lifespan (one subscription per watched workflow)."""
get_settings = _kept("settings")
"""The settings the app was built with."""
get_registry = _kept("registry")
"""Declared agents and groups, loaded once when the app was built."""
get_artifacts = _kept("artifacts")
"""The artifact store (the workers write to the same one)."""
get_experience = _kept("experience")
"""The experience index (the workers write to the same one)."""
get_rules = _kept("rules")
"""The approval rules store (the workers read the same one)."""


ClientDep = Annotated[Client, Depends(get_client)]
HubDep = Annotated[StreamHub, Depends(get_hub)]
RegistryDep = Annotated[AgentRegistry, Depends(get_registry)]
ArtifactsDep = Annotated[ArtifactStore, Depends(get_artifacts)]
ExperienceDep = Annotated[ExperienceIndex, Depends(get_experience)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
RulesDep = Annotated[RuleStore, Depends(get_rules)]


def require(role: Role) -> Callable[..., Coroutine[Any, Any, Caller]]:
    """A dependency that admits callers whose API key has at least `role`."""

    async def caller(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Depends(_BEARERS[role]),  # noqa: B008 - the role's own scheme
    ) -> Caller:
        keys: ApiKeys | None = request.app.state.api_keys
        if keys is None:
            return OPEN_ACCESS
        if credentials is None:
            raise HTTPException(
                401, "missing `Authorization: Bearer <key>` header", {"WWW-Authenticate": "Bearer"}
            )
        found = keys.caller(credentials.credentials)
        if found is None:
            raise HTTPException(401, "unknown API key", {"WWW-Authenticate": "Bearer"})
        if found.role < role:
            raise HTTPException(
                403, f"{found.principal} has role {found.role.name}; this needs {role.name} or higher"
            )
        return found

    return caller


Viewer = Annotated[Caller, Depends(require(Role.viewer))]
Operator = Annotated[Caller, Depends(require(Role.operator))]
Approver = Annotated[Caller, Depends(require(Role.approver))]
Admin = Annotated[Caller, Depends(require(Role.admin))]

# Path parameters, each defined once for every route that takes it.
SessionKey = Annotated[str, Path(pattern=SESSION_KEY_PATTERN, description="The session key.")]
GraphId = Annotated[
    str,
    Path(
        pattern=r"^(graph:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        description="The graph's UUID (or its workflow id `graph:<uuid>`).",
    ),
]
TaskUuid = Annotated[str, Path(pattern=r"^[0-9a-f-]{36}$", description="A task's engine UUID.")]
InteractionId = Annotated[str, Path(min_length=1, max_length=200)]
GrantId = Annotated[str, Path(min_length=1, max_length=200, description="The grant, e.g. `grant_1`.")]
ArtifactId = Annotated[str, Path(pattern=ARTIFACT_ID_PATTERN, description="`art_<sha256>`.")]
