"""The one mapping of call-layer errors to HTTP answers (`api/errors.py`)."""

from __future__ import annotations

import json

import pytest
from starlette.requests import Request

from api.calls.errors import (
    AlreadyExists,
    CallError,
    Closed,
    Invalid,
    NotAnswered,
    NotFound,
    Problem,
    Refused,
)
from api.errors import call_error_handler
from contracts import ErrorType

REQUEST = Request({"type": "http", "method": "POST", "path": "/graphs", "headers": []})


async def answer(err: CallError) -> tuple[int, dict[str, object], str | None]:
    response = await call_error_handler(REQUEST, err)
    return response.status_code, json.loads(bytes(response.body)), response.headers.get("retry-after")


@pytest.mark.parametrize(
    ("err", "status"),
    [
        (NotFound("no session 'a'"), 404),
        (AlreadyExists("session 'a' already exists and is running"), 409),
        (Closed("session 'a' is completed; it takes no more commands"), 409),
        (Refused(ErrorType.APPROVER_NOT_ALLOWED, "bob may not decide"), 403),
        (Refused(ErrorType.INTERACTION_ALREADY_DECIDED, "already approved"), 409),
    ],
)
async def test_a_call_error_is_its_status_with_its_words(err: CallError, status: int) -> None:
    assert await answer(err) == (status, {"detail": str(err)}, None)


async def test_an_unanswered_command_is_503_to_retry() -> None:
    assert await answer(NotAnswered("no worker")) == (503, {"detail": "no worker"}, "2")


async def test_invalid_input_is_answered_like_a_field_that_fails_validation() -> None:
    err = Invalid(
        [
            Problem(
                ("blueprint", "new_tasks", 0, "assignee_id"),
                "assignee 'Agent:x' is not declared",
                "unknown_assignee",
            ),
            Problem(("blueprint",), "task 'a': the task id is used twice", "blueprint_refused"),
        ]
    )
    assert await answer(err) == (
        422,
        {
            "detail": "body.blueprint.new_tasks.0.assignee_id: assignee 'Agent:x' is not declared; "
            "body.blueprint: task 'a': the task id is used twice",
            "errors": [
                {
                    "loc": ["body", "blueprint", "new_tasks", 0, "assignee_id"],
                    "msg": "assignee 'Agent:x' is not declared",
                    "type": "unknown_assignee",
                },
                {
                    "loc": ["body", "blueprint"],
                    "msg": "task 'a': the task id is used twice",
                    "type": "blueprint_refused",
                },
            ],
        },
        None,
    )
