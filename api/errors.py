"""Turning Temporal and validation errors into HTTP answers, in one place.

Workflow handlers raise `ApplicationError(type=...)`; the type, never the message text,
decides the status.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from contracts import ErrorType

from .busy import RETRY_AFTER_SECONDS, busy_detail, is_busy

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


def from_update_failure(err: WorkflowUpdateFailedError) -> HTTPException:
    """The HTTP error for an update a workflow rejected."""
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.type in STATUS_BY_ERROR_TYPE:
        return HTTPException(STATUS_BY_ERROR_TYPE[cause.type], detail=cause.message)
    return HTTPException(500, detail=f"the workflow failed the request: {cause}")


def is_not_found(err: RPCError) -> bool:
    """Whether an RPC error says the workflow does not exist (or is closed, for updates)."""
    return err.status == RPCStatusCode.NOT_FOUND


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
