"""The OpenAPI document tells the truth: every status a route can answer, the one error body.

FastAPI documents what routes declare; this completes it from what the app does everywhere:
- every error status carries `ErrorBody` (`detail`, plus `errors` on 422) — FastAPI's own
  `HTTPValidationError` is never what we answer, so it is replaced;
- 401/403 appear, with the bearer security scheme, only when API keys are on (otherwise no
  request needs `Authorization`, and the document says so);
- each operation says which role it needs: its security scheme is named after the role
  (`deps.require`), and `x-synapse-role` and a line of its description say it, with keys off too;
- 429 on every operation when rate limits are on (`api/rate_limits.py`);
- 413 on every POST (`api/limits.py`), 422 wherever there is input, 404/409/503 on session
  routes (no such session; a state conflict; Temporal busy or unreachable), 503 on artifact
  routes (the artifact storage unreachable).
`synapse schema` writes this same document next to the contracts' JSON Schemas.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from contracts import ErrorBody

from .errors import ERROR_DESCRIPTIONS

ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
FASTAPI_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")


def _statuses(
    method: str, path: str, operation: dict[str, Any], keys_on: bool, rate_limited: bool
) -> set[int]:
    statuses: set[int] = {429} if rate_limited else set()
    if operation.get("parameters") or operation.get("requestBody"):
        statuses.add(422)
    if method == "post":
        statuses.add(413)
    if operation.get("requestBody"):
        statuses.add(400)
    if path.startswith(("/sessions/", "/graphs/")):
        statuses |= {404, 503}
        if method == "post":
            statuses.add(409)
    if path == "/graphs" and method == "post":
        statuses.add(503)
    if path == "/sessions" and method == "post":
        statuses |= {409, 503}
    if path.startswith("/artifacts/"):
        statuses.add(404)
    if path.startswith("/artifacts"):
        statuses.add(503)
    if keys_on and operation.get("security"):
        statuses |= {401, 403}
    return statuses


def _name_role(operation: dict[str, Any], keys_on: bool) -> None:
    """`x-synapse-role` and a description line from the operation's security scheme (a role)."""
    names = [name for requirement in operation.get("security", []) for name in requirement]
    if not names:
        return
    role = names[0]
    operation["x-synapse-role"] = role
    needs = f"Needs an API key of role `{role}` or higher."
    if not keys_on:
        needs = f"With API keys on (`SYNAPSE_API_KEYS`), this needs a key of role `{role}` or higher."
    description = operation.get("description")
    operation["description"] = f"{description}\n\n{needs}" if description else needs


def complete(document: dict[str, Any], keys_on: bool, rate_limited: bool = False) -> dict[str, Any]:
    """The document with every error status and the one error body (in place; returned)."""
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            _name_role(operation, keys_on)
            if not keys_on:
                operation.pop("security", None)
            responses: dict[str, Any] = operation.setdefault("responses", {})
            for code in _statuses(method, path, operation, keys_on, rate_limited):
                responses.setdefault(str(code), {"description": ERROR_DESCRIPTIONS[code]})
            for status, response in responses.items():
                if status.isdigit() and int(status) >= 400:
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in FASTAPI_VALIDATION_SCHEMAS:
        schemas.pop(name, None)
    error_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error_schema.pop("$defs", {}))
    schemas["ErrorBody"] = error_schema
    if not keys_on:
        components.pop("securitySchemes", None)
    return document


def install(app: FastAPI, *, keys_on: bool, rate_limited: bool = False) -> None:
    """Serve the completed document at `/openapi.json` (built once)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            app.openapi_schema = complete(document, keys_on, rate_limited)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
