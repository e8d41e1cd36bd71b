"""`Annotated` dependencies: the Temporal client, settings and the calling principal."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from temporalio.client import Client

from core.agent_registry import AgentRegistry
from core.security import OPEN_ACCESS, Caller, Role
from core.settings import Settings

from .sse import StreamHub

_bearer = HTTPBearer(auto_error=False)


def get_client(request: Request) -> Client:
    """The Temporal client created once in the lifespan."""
    client: Client = request.app.state.client
    return client


def get_hub(request: Request) -> StreamHub:
    """The stream hub created in the lifespan (one subscription per watched workflow)."""
    hub: StreamHub = request.app.state.hub
    return hub


def get_settings(request: Request) -> Settings:
    """The settings the app was built with."""
    settings: Settings = request.app.state.settings
    return settings


def get_registry(request: Request) -> AgentRegistry:
    """Declared agents and groups, loaded once when the app was built."""
    registry: AgentRegistry = request.app.state.registry
    return registry


ClientDep = Annotated[Client, Depends(get_client)]
HubDep = Annotated[StreamHub, Depends(get_hub)]
RegistryDep = Annotated[AgentRegistry, Depends(get_registry)]
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
