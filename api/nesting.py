"""One nesting limit at the door: no request body nests deeper than `SYNAPSE_MAX_JSON_DEPTH`.

`nesting_checked` is a dependency of the whole app (`api/main.py`), so it holds every route that
takes JSON, whatever its free fields are (a blueprint's `input_data`, a rollback's
`new_input_data`, a decision's `response_data` and `metadata`, a rule offer's `arguments`...). It
runs before the body is validated and answers 422 naming the path of the first container too deep
and the limit, in the shape of every other 422 (`errors.invalid_response`). A body too deep even
for Python's JSON parser (thousands of levels) gets the same answer (`errors.py` turns FastAPI's
400 into it).

It reads the body's bytes (`core.nesting.nested_too_deep`): a body with no more brackets than the
limit, which is nearly every body, is not scanned.
"""

from __future__ import annotations

import email.message

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from core.nesting import Path, nested_too_deep

VARIABLE = "SYNAPSE_MAX_JSON_DEPTH"
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def too_deep_errors(path: Path, limit: int) -> list[dict[str, object]]:
    """The validation error of a body nested too deep at `path` (pydantic's error shape)."""
    return [
        {
            "loc": ("body", *path),
            "msg": f"nested deeper than {limit} levels, the limit ({VARIABLE}; the body is level 1)",
            "type": "json_too_deep",
        }
    ]


def _is_json(request: Request) -> bool:
    """Whether FastAPI reads this request's body as JSON (no content type, or a JSON one)."""
    content_type = request.headers.get("content-type")
    if not content_type:
        return True
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


async def too_deep_in(request: Request) -> tuple[Path, int] | None:
    """Where the request's JSON body first nests deeper than the limit, and the limit; None for a
    body within it (or not JSON)."""
    if request.method not in _BODY_METHODS or not _is_json(request):
        return None
    limit: int = request.app.state.settings.limits.max_json_depth
    path = nested_too_deep(await request.body(), limit)
    return None if path is None else (path, limit)


async def nesting_checked(request: Request) -> None:
    """Refuse a JSON body nested deeper than the limit (422 naming where and the limit).

    Raises:
        RequestValidationError: The body nests too deep.
    """
    found = await too_deep_in(request)
    if found is not None:
        raise RequestValidationError(too_deep_errors(*found))
