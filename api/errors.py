"""Turning session-call, Temporal and validation errors into HTTP answers, in one place.

Workflow handlers raise `ApplicationError(type=...)`; the type, never the message text,
decides the status.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from temporalio.service import RPCError, RPCStatusCode

from contracts import ErrorType

from .busy import RETRY_AFTER_SECONDS, busy_detail, is_busy
from .session_calls import Refused, SessionCallError, SessionClosed, SessionExists, SessionNotFound

STATUS_BY_ERROR_TYPE: dict[str, int] = {
    ErrorType.INTERACTION_NOT_FOUND: 404,
    ErrorType.INTERACTION_ALREADY_DECIDED: 409,
    ErrorType.APPROVER_NOT_ALLOWED: 403,
    ErrorType.SESSION_ALREADY_PAUSED: 409,
    ErrorType.SESSION_NOT_PAUSED: 409,
    ErrorType.SESSION_CLOSED: 409,
}


BUSY_RESPONSE: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "Temporal had no room for the command in time, or is unreachable; nothing "
        "was applied. Retry after `Retry-After` seconds."
    }
}
"""The OpenAPI entry of routes that send commands to workflows."""


def status_of(err: SessionCallError) -> int:
    """The HTTP status of a session call that failed."""
    if isinstance(err, SessionNotFound):
        return 404
    if isinstance(err, SessionExists | SessionClosed):
        return 409
    if isinstance(err, Refused) and err.error_type in STATUS_BY_ERROR_TYPE:
        return STATUS_BY_ERROR_TYPE[err.error_type]
    return 500


async def unknown_assignee_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 naming the agents that are declared."""
    return JSONResponse(status_code=422, content={"detail": f"agent_id: {exc}"})


async def session_call_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """404 / 409 / 403 ... with the session's own words as `detail`."""
    assert isinstance(exc, SessionCallError)
    return JSONResponse(status_code=status_of(exc), content={"detail": str(exc)})


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


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 whose `detail` names each bad field, its value and what was expected."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for error in exc.errors():
        where = _location(error.get("loc", ()))
        if error.get("type") == "extra_forbidden":
            problems.append(f"{where}: unknown field (not part of the contract)")
        else:
            value = error.get("input")
            shown = f" (got {value!r})" if value is not None and not isinstance(value, dict) else ""
            problems.append(f"{where}: {error.get('msg')}{shown}")
    return JSONResponse(
        status_code=422,
        content={"detail": "; ".join(problems) or "invalid request", "errors": exc.errors()},
    )
