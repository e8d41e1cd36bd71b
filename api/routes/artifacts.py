"""Artifacts: upload large content once, refer to it by id, read it back whole."""

from __future__ import annotations

import asyncio
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError

from contracts import ArtifactInfo
from core.artifacts import ArtifactNotFound

from ..calls import scope
from ..deps import ArtifactId, ArtifactsDep, Operator, Viewer
from ..errors import ERROR_RESPONSES
from ..scope import artifact_owners

router = APIRouter(prefix="/artifacts", tags=["artifacts"])

PASSIVE_TYPES = frozenset(
    {
        "text/plain",
        "text/csv",
        "application/json",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    }
)
"""Media types a browser shows without running anything (with `nosniff`: never taken for HTML).
These are shown `inline`; every other type (HTML, SVG, XML, JavaScript, PDF, anything unknown) is
an `attachment`: downloaded, never opened in the API's origin, where a script would reach the
console's key."""
POLICY = "sandbox; default-src 'none'"
"""Every artifact's Content-Security-Policy: were it shown anyway, it would be in a sandbox of its
own origin, running no script and loading nothing."""


@router.post(
    "",
    status_code=201,
    response_model=ArtifactInfo,
    responses=ERROR_RESPONSES(401, 403, 413, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary", "minLength": 1}}
            },
            "description": "The content (any media type; sent as its own Content-Type).",
        }
    },
)
async def upload_artifact(
    request: Request,
    store: ArtifactsDep,
    caller: Operator,
    name: Annotated[str | None, Query(max_length=200, description="A file name or label.")] = None,
    project: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=1000,
            description="The project it is for: that project's keys may read it. A key scoped to "
            "projects uploads for one of them (none named: its only one).",
        ),
    ] = None,
) -> ArtifactInfo:
    """Store the request body (up to SYNAPSE_MAX_ARTIFACT_BYTES) and answer its id; the same content
    always gets the same id. Attach it to a message (`artifacts`) or an agent's `artifact_config`.
    A key scoped to projects names one of them as `project` (422 when it has several and names none,
    403 for another), and reads the artifact back only while one of its projects owns it."""
    try:
        project = scope.project_to_start(caller, project)
    except ValueError as err:
        raise HTTPException(422, str(err)) from None
    if not caller.may_act_in(project):
        raise HTTPException(403, scope.not_its_project(caller, project))
    content = await request.body()
    if not content:
        raise RequestValidationError(
            [{"loc": ("body",), "msg": "the body is empty: send the content", "type": "missing"}]
        )
    media_type = request.headers.get("content-type", "application/octet-stream").split(";")[0].strip()
    ref = await asyncio.to_thread(
        store.put, content, media_type=media_type or "application/octet-stream", name=name
    )
    if project is not None:
        await asyncio.to_thread(artifact_owners(request).add_project, ref.artifact_id, project)
    return await asyncio.to_thread(store.info, ref.artifact_id)


@router.get(
    "/{artifact_id}",
    responses={
        200: {
            "content": {"*/*": {}},
            "description": "The whole content, with its media type: shown `inline` when the type is "
            "passive (text/plain, text/csv, application/json, PNG, JPEG, GIF, WebP), else an `attachment`.",
        },
        **ERROR_RESPONSES(401, 403, 404, 422),
    },
)
async def get_artifact(artifact_id: ArtifactId, store: ArtifactsDep, caller: Viewer) -> Response:
    """The whole content of an artifact (a tool result, an agent answer, an upload, an archived page).

    HTML, SVG, scripts and any type not known to be passive download as an attachment; every
    artifact is in a `sandbox` Content-Security-Policy, so none runs a script in the API's origin.
    A key scoped to projects reads only its projects' artifacts: another's is 404 before its content
    is read (`api.scope.in_scope`, `core.artifacts.owners`)."""
    try:
        info, content = await asyncio.to_thread(store.get, artifact_id)
    except ArtifactNotFound as err:
        raise HTTPException(404, f"no artifact {artifact_id!r}") from err
    passive = info.media_type.split(";")[0].strip().lower() in PASSIVE_TYPES
    headers = {"X-Artifact-Size": str(info.size_bytes), "Content-Security-Policy": POLICY}
    if info.name or not passive:
        disposition = "inline" if passive else "attachment"
        headers["Content-Disposition"] = content_disposition(info.name or artifact_id, disposition)
    return Response(content, media_type=info.media_type, headers=headers)


def content_disposition(name: str, disposition: str = "inline") -> str:
    """`inline` or `attachment`, with the name as an ASCII fallback and, exactly, as RFC 6266
    `filename*` (UTF-8).

    Header values are Latin-1 and one line: any name a user gave must not break the response.
    """
    fallback = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in name)
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
