"""`Annotated` dependencies: the Temporal client, settings and the calling principal."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from core.agent_registry import AgentRegistry
from core.artifacts import ArtifactStore
from core.experience import ExperienceIndex
from core.security import OPEN_ACCESS, Caller, Role
from core.settings import Settings

from .sse import StreamHub

_bearer = HTTPBearer(auto_error=False)


def _kept(name: str) -> Callable[[Request], Any]:
    """A dependency returning what the app keeps as `app.state.<name>` (set at build or start)."""

    def kept(request: Request) -> Any:
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


ClientDep = Annotated[Client, Depends(get_client)]
HubDep = Annotated[StreamHub, Depends(get_hub)]
RegistryDep = Annotated[AgentRegistry, Depends(get_registry)]
ArtifactsDep = Annotated[ArtifactStore, Depends(get_artifacts)]
ExperienceDep = Annotated[ExperienceIndex, Depends(get_experience)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def require(role: Role) -> Callable[..., Coroutine[Any, Any, Caller]]:
    """A dependency that admits callers whose API key has at least `role`."""

    async def caller(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> Caller:
        keys: dict[str, Caller] | None = request.app.state.api_keys
        if keys is None:
            return OPEN_ACCESS
        if credentials is None:
            raise HTTPException(
                401, "missing `Authorization: Bearer <key>` header", {"WWW-Authenticate": "Bearer"}
            )
        found = keys.get(credentials.credentials)
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
