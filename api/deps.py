"""`Annotated` dependencies: the Temporal client, settings, the calling principal, and the path
parameters several routes share (a session key, a graph id, an interaction id, ...)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
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

from .calls.decisions import record_refused_caller
from .sse import StreamHub
from .sse.response import After, EventStream, LastEventId

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


async def get_events(hub: HubDep, after: After = None, last_event_id: LastEventId = None) -> EventStream:
    """Where an events route's client resumes (`?after=`, `Last-Event-ID`), and the hub it reads
    (async, as every dependency here: a plain function would wait for one of FastAPI's threads)."""
    return EventStream.resuming(hub, after, last_event_id)


Events = Annotated[EventStream, Depends(get_events)]


def _identified(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Caller:
    """Who presents these credentials (401 without a known key; everyone is admin with keys off)."""
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
    return found


def _below(found: Caller, role: Role) -> HTTPException:
    return HTTPException(
        403, f"{found.principal} has role {found.role.name}; this needs {role.name} or higher"
    )


def require(
    role: Role, refused: Callable[[Request, Caller], Awaitable[None]] | None = None
) -> Callable[..., Coroutine[Any, Any, Caller]]:
    """A dependency that admits callers whose API key has at least `role`; `refused(request, caller)`
    runs before a caller below it is refused (to record a decision it tried, as `decider` does)."""

    async def caller(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Depends(_BEARERS[role]),  # noqa: B008 - the role's own scheme
    ) -> Caller:
        found = _identified(request, credentials)
        if found.role < role:
            if refused is not None:
                await refused(request, found)
            raise _below(found, role)
        return found

    return caller


def decider(asked: Callable[[dict[str, Any]], str | None]) -> Callable[..., Coroutine[Any, Any, Caller]]:
    """A dependency that admits approvers to a decision route, like `require(Role.approver)`, and
    records a refused caller's attempt in the audit trail of the workflow `asked(path_params)` names
    (None: none to record it in), as every door records a refused decision."""

    async def caller(
        request: Request,
        credentials: HTTPAuthorizationCredentials | None = Depends(_BEARERS[Role.approver]),  # noqa: B008 - the role's own scheme
    ) -> Caller:
        found = _identified(request, credentials)
        if found.role < Role.approver:
            workflow_id = asked(request.path_params)
            interaction_id = str(request.path_params.get("interaction_id", ""))
            if workflow_id is not None and 0 < len(interaction_id) <= MAX_ID_LENGTH:
                body = await json_or_none(request)
                await record_refused_caller(
                    request.app.state.client, workflow_id, found, interaction_id, body
                )
            raise _below(found, Role.approver)
        return found

    return caller


async def json_or_none(request: Request) -> Any:
    """The request's JSON body, None when it has none that parses."""
    try:
        return await request.json()
    except ValueError:
        return None


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
MAX_ID_LENGTH = 200
InteractionId = Annotated[str, Path(min_length=1, max_length=MAX_ID_LENGTH)]
GrantId = Annotated[str, Path(min_length=1, max_length=200, description="The grant, e.g. `grant_1`.")]
ArtifactId = Annotated[str, Path(pattern=ARTIFACT_ID_PATTERN, description="`art_<sha256>`.")]
