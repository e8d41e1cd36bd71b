"""Turning call-layer, Temporal and validation errors into HTTP answers, in one place.

The call layer (`api/calls/`) raises domain errors and knows no HTTP; here each kind gets its
status and body. Workflow handlers raise `ApplicationError(type=...)`; the type, never the
message text, decides the status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from temporalio.service import RPCError, RPCStatusCode

from contracts import ErrorBody, ErrorType

from .calls.busy import RETRY_AFTER_SECONDS, busy_detail, is_busy
from .calls.errors import AlreadyExists, CallError, Closed, Invalid, NotAnswered, NotFound, Refused
from .calls.sizes import TooLarge
from .nesting import too_deep_errors, too_deep_in

STATUS_BY_ERROR_TYPE: dict[str, int] = {
    ErrorType.INTERACTION_NOT_FOUND: 404,
    ErrorType.INTERACTION_ALREADY_DECIDED: 409,
    ErrorType.APPROVER_NOT_ALLOWED: 403,
    ErrorType.ROLE_NOT_ALLOWED: 403,
    ErrorType.INTERACTION_RELAYED: 404,
    ErrorType.ALREADY_PAUSED: 409,
    ErrorType.NOT_PAUSED: 409,
    ErrorType.CLOSED: 409,
    ErrorType.INVALID_RESPONSE: 422,
    ErrorType.GRANT_NOT_FOUND: 404,
    ErrorType.GRANT_ALREADY_REVOKED: 409,
    ErrorType.NO_TURN_RUNNING: 409,
    ErrorType.APPROVER_ALREADY_COUNTED: 409,
    ErrorType.TASK_NOT_FOUND: 404,
    ErrorType.TASK_ALREADY_PAUSED: 409,
    ErrorType.TASK_NOT_PAUSED: 409,
    ErrorType.TASK_FINISHED: 409,
    ErrorType.TASK_NEVER_RAN: 409,
    ErrorType.ROLLBACK_IN_FLIGHT: 409,
    ErrorType.TASK_STARTED: 409,
    ErrorType.VERSION_NOT_FOUND: 422,
    ErrorType.INVALID_INTERVENTION: 422,
    ErrorType.BLUEPRINT_REFUSED: 422,
    ErrorType.UNKNOWN_AGENT: 422,
}


ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "The request cannot be read (e.g. a body that is not what the route takes).",
    401: "No API key, or an unknown one (only when SYNAPSE_API_KEYS is set).",
    403: "The caller's role or principal may not do this.",
    404: "No such session, interaction or artifact.",
    409: "The request conflicts with the current state (already decided, already paused, closed).",
    413: "Something is larger than its configured limit; the detail names the limit and the size.",
    422: "A field is invalid; `errors` lists each one.",
    429: "The caller made more requests than `SYNAPSE_RATE_LIMIT` allows; retry after `Retry-After` seconds.",
    503: "Temporal had no room for the command in time, is unreachable, or no worker answered for the "
    "session in time (or the artifact storage is unreachable); nothing was applied. Retry after "
    "`Retry-After` seconds.",
}


def ERROR_RESPONSES(*statuses: int, **descriptions: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses, all with the one error body (`ErrorBody`).

    `descriptions` overrides a status's text: `ERROR_RESPONSES(404, s404="No such session.")`.
    """
    return {
        status: {
            "model": ErrorBody,
            "description": descriptions.get(f"s{status}", ERROR_DESCRIPTIONS[status]),
        }
        for status in statuses
    }


COMMAND_ERRORS = (401, 403, 404, 409, 413, 422, 503)
"""Statuses a command to a session can answer besides its success."""
BUSY_RESPONSE = ERROR_RESPONSES(503)
"""The OpenAPI entry of routes that send commands to workflows."""


def status_of(err: CallError) -> int:
    """The HTTP status of a call to a workflow that failed."""
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, AlreadyExists | Closed):
        return 409
    if isinstance(err, NotAnswered):
        return 503
    if isinstance(err, Invalid):
        return 422
    if isinstance(err, Refused) and err.error_type in STATUS_BY_ERROR_TYPE:
        return STATUS_BY_ERROR_TYPE[err.error_type]
    return 500


async def unknown_assignee_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 naming the agents that are declared."""
    return JSONResponse(status_code=422, content={"detail": f"agent_id: {exc}"})


async def too_large_handler(_request: Request, exc: Exception) -> JSONResponse:
    """413 naming what is too large, its size, the limit and the variable that sets it."""
    assert isinstance(exc, TooLarge)
    return JSONResponse(status_code=413, content={"detail": str(exc)})


async def call_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """404 / 409 / 403 ... with the workflow's own words as `detail`; `Invalid` input is answered
    like a request that fails validation (422 naming each field in the body)."""
    assert isinstance(exc, CallError)
    if isinstance(exc, Invalid):
        return invalid_response(
            [
                {"loc": ("body", *problem.loc), "msg": problem.msg, "type": problem.type}
                for problem in exc.problems
            ]
        )
    status = status_of(exc)
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else None
    return JSONResponse(status_code=status, content={"detail": str(exc)}, headers=headers)


async def temporal_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """503 with `Retry-After` when Temporal is busy or unreachable; anything else stays a 500."""
    assert isinstance(exc, RPCError)
    if is_busy(exc):
        detail = busy_detail(exc)
    elif exc.status == RPCStatusCode.UNAVAILABLE:
        detail = f"Temporal is unreachable right now ({exc.message}); nothing was applied, retry shortly"
    else:
        raise exc
    return JSONResponse(
        status_code=503, content={"detail": detail}, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
    )


async def storage_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """503 with `Retry-After` when the artifact storage (a bucket) cannot be reached."""
    return JSONResponse(
        status_code=503, content={"detail": str(exc)}, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
    )


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 whose `detail` names each bad field, its value and what was expected."""
    assert isinstance(exc, RequestValidationError)
    return invalid_response(exc.errors())


TASK_UUID_FIELDS = frozenset({"target_task_id", "task_id"})
"""UUID fields that name a graph task (an intervention's target, `update_tasks[].task_id`)."""
TASK_UUID_HINT = (
    "expected a task's engine UUID, not its blueprint id: POST /graphs answers them in `tasks` "
    "(blueprint id -> UUID), and GET /graphs/{id} lists each task's `task_uuid`"
)


def _message(error: Mapping[str, Any]) -> str:
    """What was expected: pydantic's words, or where a task's UUID comes from when that is wrong."""
    loc = tuple(error.get("loc", ()))
    kind = error.get("type")
    not_a_task_uuid = (
        bool(loc) and loc[-1] in TASK_UUID_FIELDS and kind in ("uuid_parsing", "uuid_type")
    ) or (loc == ("path", "task_uuid") and kind == "string_pattern_mismatch")
    return TASK_UUID_HINT if not_a_task_uuid else str(error.get("msg", ""))


def invalid_response(errors: Sequence[Mapping[str, Any]]) -> JSONResponse:
    """422 whose `detail` names each bad field (pydantic's error shape: `loc`, `msg`, `type`,
    `input`), its value and what was expected; `errors` lists them."""
    problems = []
    fields = []
    for error in errors:
        message = _message(error)
        fields.append({"loc": list(error.get("loc", ())), "msg": message, "type": error.get("type", "")})
        where = _location(error.get("loc", ()))
        if error.get("type") == "extra_forbidden":
            problems.append(f"{where}: unknown field (not part of the contract)")
        else:
            value = error.get("input")
            shown = f" (got {value!r})" if value is not None and not isinstance(value, dict) else ""
            problems.append(f"{where}: {message}{shown}")
    return JSONResponse(
        status_code=422,
        content={"detail": "; ".join(problems) or "invalid request", "errors": fields},
    )


async def method_not_allowed_handler(request: Request, exc: Exception) -> Response:
    """405 whose `Allow` lists every method the path takes (Starlette lists only one route's); 422
    for a body too deep to parse (`nesting.py`)."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
        found = await too_deep_in(request)  # a body too deep for Python's JSON parser
        if found is not None:
            return invalid_response(too_deep_errors(*found))
    if exc.status_code != 405:
        return await http_exception_handler(request, exc)
    methods: set[str] = set()
    for route in request.app.routes:
        if isinstance(route, Route) and route.methods and route.path_regex.match(request.url.path):
            methods |= route.methods
    return JSONResponse(
        status_code=405,
        content={"detail": f"{request.method} is not allowed here; allowed: {', '.join(sorted(methods))}"},
        headers={"Allow": ", ".join(sorted(methods))},
    )
