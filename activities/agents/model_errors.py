"""Provider errors → what the agent step does about them: retry, or fail for good.

Shared by the ADK, LangGraph and AutoGen adapters. A model call that fails is either

* **transient** (rate limit, 5xx, connection refused, timeout): `transient_error` builds a
  retryable `ApplicationError(type=TRANSIENT_ERROR_TYPE)`; the adapter raises it and Temporal
  retries the whole step with the backoff of the workflow's `AGENT_STEP_RETRY` (the adapters
  call providers with their own retries off, so backoff happens in one place and is visible in
  the Web UI); or
* **permanent** (bad key, quota used up, unknown model, rejected request):
  `classify_model_error` returns `FailureDetails` and the adapter returns a `FAILURE`
  `AgentResult` (`model_failure`), which ends the turn without retries.

Messages never contain secrets: provider text is passed through `redact` (API keys, bearer
tokens, `key=` query parameters, and any secret value the caller names).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx
import openai
from temporalio.exceptions import ApplicationError

from contracts import AgentIntent, AgentResult, AgentSpec, ErrorType, FailureDetails, FailureType, FinalAnswer

if TYPE_CHECKING:
    from google.genai import errors as genai_errors

ENDPOINT_ERRORS = (openai.OpenAIError, httpx.HTTPError, OSError, TimeoutError)
"""What a call to an OpenAI-compatible endpoint raises when the model fails (to classify)."""
#: `ApplicationError.type` of a transient model failure (retryable; not in the non-retryable list).
TRANSIENT_ERROR_TYPE = ErrorType.MODEL_UNAVAILABLE


def _transport_errors(attribute: str) -> tuple[type[BaseException], ...]:
    """`httpx.<attribute>` and, when installed, `httpx2.<attribute>` (the openai SDK's transport)."""
    found = []
    for module in ("httpx", "httpx2"):
        try:
            found.append(getattr(importlib.import_module(module), attribute))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


_TIMEOUTS = (openai.APITimeoutError, TimeoutError, *_transport_errors("TimeoutException"))
_CONNECTION_ERRORS = (openai.APIConnectionError, ConnectionError, *_transport_errors("TransportError"))
_MAX_RETRY_AFTER = timedelta(seconds=60)
_MAX_MESSAGE_CHARS = 300
_SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}"),  # OpenAI-style keys, masked or not
    re.compile(r"\bAIza[0-9A-Za-z_\-]{10,}"),  # Google API keys
    re.compile(r"(?i)\bbearer\s+[^\s'\",]+"),
    re.compile(r"(?i)\b(key|api[_-]?key|access_token)=[^&\s'\"]+"),
)


class ModelConfigError(Exception):
    """The model cannot be called as configured (e.g. its key's env var is unset): permanent."""

    def __init__(self, message: str, failure_type: FailureType = "AUTHENTICATION_FAILED") -> None:
        """Keep the secret-free message and the failure type it stands for."""
        super().__init__(message)
        self.failure_type: FailureType = failure_type


def endpoint_api_key(spec: AgentSpec) -> str:
    """The key for `spec.base_url`: the env var `spec.api_key_env`, or `EMPTY` when none is named.

    Raises:
        ModelConfigError: The named env var is not set (an `AUTHENTICATION_FAILED` failure).
    """
    if not spec.api_key_env:
        return "EMPTY"  # local servers (vLLM, Ollama, llama.cpp) accept any key
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise ModelConfigError(
            f"agent {spec.name!r} reads its API key from the env var {spec.api_key_env!r} "
            "(api_key_env), which is not set on the worker"
        )
    return key


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with API keys, bearer tokens and the given secret values replaced by `[redacted]`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[: _MAX_MESSAGE_CHARS - 1] + "…"


def _provider_message(err: BaseException) -> str:
    """The provider's own error text, without the SDK's `Error code: 401 - {...}` wrapping."""
    body = getattr(err, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    message = getattr(err, "message", None)
    return message if isinstance(message, str) and message else str(err) or type(err).__name__


def _openai_failure(err: openai.APIStatusError) -> FailureType | None:
    status, code = err.status_code, (err.code or "")
    if status in (401, 403):
        return "AUTHENTICATION_FAILED"
    if status == 429:
        return "QUOTA_EXCEEDED" if code == "insufficient_quota" else None
    if status == 408 or status == 409 or status >= 500:
        return None
    if status in (400, 422):
        return "VALIDATION_ERROR"
    return "MODEL_ERROR"  # 404 (unknown model or endpoint) and any other client error


def _genai_failure(err: genai_errors.APIError) -> FailureType | None:
    status, text = err.code, f"{err.status} {err.message} {err.details}"
    if status in (401, 403) or "API_KEY_INVALID" in text or "API key not valid" in text:
        return "AUTHENTICATION_FAILED"
    if status == 429:
        # Gemini says RESOURCE_EXHAUSTED for per-minute limits (transient) and for a spent
        # billing quota; only the latter names billing.
        return "QUOTA_EXCEEDED" if "billing" in text.lower() else None
    if status in (408, 409) or status >= 500:
        return None
    if status in (400, 422):
        return "VALIDATION_ERROR"
    return "MODEL_ERROR"


def _kind(err: BaseException) -> tuple[FailureType | None, str]:
    """(failure type or None when transient, short status label)."""
    if isinstance(err, openai.APIStatusError):
        return _openai_failure(err), f"HTTP {err.status_code}" + (f" {err.code}" if err.code else "")
    if isinstance(err, _TIMEOUTS):
        return None, "timeout"
    if isinstance(err, _CONNECTION_ERRORS):
        return None, "connection failed"
    # google-genai costs ~0.8 s to import; an error of it can only exist once it is loaded.
    genai = sys.modules.get("google.genai.errors")
    if genai is not None and isinstance(err, genai.APIError):
        return _genai_failure(err), f"HTTP {err.code}" + (f" {err.status}" if err.status else "")
    if isinstance(err, openai.APIResponseValidationError):
        return "MODEL_ERROR", "unreadable response"
    return "MODEL_ERROR", type(err).__name__


def classify_model_error(
    err: BaseException, *, model: str | None = None, secrets: Iterable[str] = ()
) -> FailureDetails | None:
    """Whether a failed model call is worth retrying, and if not, why it failed.

    Args:
        err: What the provider SDK raised (openai, google-genai, httpx, or anything else; an
            unknown exception type is a permanent `MODEL_ERROR`).
        model: The model called, named in the message.
        secrets: Values to strip from the message (e.g. the API key used).

    Returns:
        None when the error is transient (raise `transient_error(err, ...)` to retry), else
        the `FailureDetails` of a non-retryable failure: `AUTHENTICATION_FAILED` (401/403),
        `QUOTA_EXCEEDED` (429 `insufficient_quota`), `VALIDATION_ERROR` (400/422: the request
        was rejected) or `MODEL_ERROR` (404 and the rest).
    """
    if isinstance(err, ModelConfigError):
        return FailureDetails(type=err.failure_type, message=redact(str(err), secrets))
    failure, _ = _kind(err)
    if failure is None:
        return None
    return FailureDetails(type=failure, message=describe_model_error(err, model=model, secrets=secrets))


def describe_model_error(err: BaseException, *, model: str | None = None, secrets: Iterable[str] = ()) -> str:
    """`model 'gpt-4o' failed (HTTP 401 invalid_api_key): Incorrect API key provided: [redacted]`."""
    if isinstance(err, ModelConfigError):
        return redact(str(err), secrets)
    _, label = _kind(err)
    who = f"model {model!r}" if model else "the model"
    return redact(f"{who} failed ({label}): {_provider_message(err)}", secrets)


def _retry_after(err: BaseException) -> timedelta | None:
    """The provider's `Retry-After` (seconds), capped, when it sent one."""
    response: Any = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or seconds <= 0:
        return None
    return min(timedelta(seconds=seconds), _MAX_RETRY_AFTER)


def transient_error(message: str, cause: BaseException | None = None) -> ApplicationError:
    """A retryable `ApplicationError(type=TRANSIENT_ERROR_TYPE)`; honours the cause's Retry-After.

    Args:
        message: Secret-free text (e.g. from `describe_model_error`).
        cause: The provider error, read for a `Retry-After` header.
    """
    return ApplicationError(
        message,
        type=TRANSIENT_ERROR_TYPE,
        non_retryable=False,
        next_retry_delay=_retry_after(cause) if cause is not None else None,
    )


def model_failure(
    details: FailureDetails, *, thought: str | None = None, metadata: dict[str, Any] | None = None
) -> AgentResult:
    """The `FAILURE` result of a step whose model failed for good (the answer repeats the message)."""
    return AgentResult(
        status="FAILURE",
        output=AgentIntent(
            thought=thought or "The model call failed; I cannot go on.",
            intent=FinalAnswer(content=details.message),
        ),
        failure_details=details,
        metadata=metadata,
    )
