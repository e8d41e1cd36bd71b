"""Provider errors classified as transient (retry) or permanent (FailureDetails), without secrets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import httpx2
import openai
import pytest
from google.genai import errors as genai_errors

from activities.agents.model_errors import (
    TRANSIENT_ERROR_TYPE,
    ModelConfigError,
    classify_model_error,
    endpoint_api_key,
    model_failure,
    redact,
    transient_error,
)
from contracts import AgentSpec

REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def openai_error(
    status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None
) -> Any:
    response = httpx2.Response(status, request=REQUEST, headers=headers or {})
    body = {"message": message, "type": "x", "code": code}
    classes = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        403: openai.PermissionDeniedError,
        404: openai.NotFoundError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
    }
    cls = classes.get(status, openai.InternalServerError)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (openai_error(401, "Incorrect API key provided"), "AUTHENTICATION_FAILED"),
        (openai_error(403, "Project has no access"), "AUTHENTICATION_FAILED"),
        (openai_error(429, "You exceeded your current quota", "insufficient_quota"), "QUOTA_EXCEEDED"),
        (openai_error(429, "Rate limit reached", "rate_limit_exceeded"), None),
        (openai_error(500, "The server had an error"), None),
        (openai_error(400, "Invalid 'messages'"), "VALIDATION_ERROR"),
        (openai_error(422, "Unprocessable"), "VALIDATION_ERROR"),
        (openai_error(404, "The model `x` does not exist", "model_not_found"), "MODEL_ERROR"),
        (openai.APIConnectionError(request=REQUEST), None),
        (openai.APITimeoutError(request=REQUEST), None),
        (httpx.ConnectError("refused"), None),
        (httpx2.ReadTimeout("slow"), None),
        (TimeoutError(), None),
        (
            genai_errors.ClientError(
                400, {"error": {"message": "API key not valid.", "status": "INVALID_ARGUMENT"}}
            ),
            "AUTHENTICATION_FAILED",
        ),
        (
            genai_errors.ClientError(403, {"error": {"message": "denied", "status": "PERMISSION_DENIED"}}),
            "AUTHENTICATION_FAILED",
        ),
        (
            genai_errors.ClientError(
                429, {"error": {"message": "per minute", "status": "RESOURCE_EXHAUSTED"}}
            ),
            None,
        ),
        (
            genai_errors.ClientError(
                429, {"error": {"message": "check your plan and billing", "status": "RESOURCE_EXHAUSTED"}}
            ),
            "QUOTA_EXCEEDED",
        ),
        (
            genai_errors.ClientError(404, {"error": {"message": "model not found", "status": "NOT_FOUND"}}),
            "MODEL_ERROR",
        ),
        (genai_errors.ServerError(503, {"error": {"message": "overloaded", "status": "UNAVAILABLE"}}), None),
        (ModelConfigError("env var 'K' is not set"), "AUTHENTICATION_FAILED"),
        (KeyError("surprise"), "MODEL_ERROR"),
    ],
)
def test_classification(err: BaseException, expected: str | None) -> None:
    details = classify_model_error(err, model="m")

    assert (details.type if details else None) == expected


def test_messages_name_the_model_and_never_the_key() -> None:
    key = "sk-proj-abcdefghijklmnop"
    err = openai_error(401, f"Incorrect API key provided: {key}. Bearer {key}", "invalid_api_key")

    details = classify_model_error(err, model="gpt-4o", secrets=[key])

    assert details is not None
    assert details.message == (
        "model 'gpt-4o' failed (HTTP 401 invalid_api_key): Incorrect API key provided: [redacted]. [redacted]"
    )


@pytest.mark.parametrize(
    "text",
    [
        "key sk-abc123def456",
        "Bearer abc.def",
        "https://x/v1/models?key=AIzaSyA123&alt=json",
        "AIzaSyD-1234567890abc",
    ],
)
def test_redact_removes_keys_and_tokens(text: str) -> None:
    assert "[redacted]" in redact(text)
    assert "abc123" not in redact(text) and "AIza" not in redact(text)


def test_transient_error_is_retryable_and_honours_retry_after() -> None:
    err = openai_error(429, "slow down", "rate_limit_exceeded", headers={"retry-after": "7"})

    error = transient_error("model 'm' failed (HTTP 429)", err)

    assert error.type == TRANSIENT_ERROR_TYPE and not error.non_retryable
    assert error.next_retry_delay == timedelta(seconds=7)
    assert transient_error("x", openai_error(500, "boom")).next_retry_delay is None


def test_endpoint_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-value")
    monkeypatch.delenv("UNSET_KEY", raising=False)

    assert endpoint_api_key(AgentSpec(name="a", api_key_env="MY_KEY")) == "sk-value"
    assert endpoint_api_key(AgentSpec(name="a")) == "EMPTY"
    with pytest.raises(ModelConfigError, match="'UNSET_KEY'"):
        endpoint_api_key(AgentSpec(name="a", api_key_env="UNSET_KEY"))


def test_model_failure_result() -> None:
    details = classify_model_error(openai_error(401, "no"), model="m")
    assert details is not None

    result = model_failure(details, metadata={"model": "m"})

    assert result.status == "FAILURE" and result.failure_details == details
    assert result.output.intent.model_dump(exclude_none=True) == {"content": details.message}
