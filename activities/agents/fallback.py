"""An agent's model, then its fallback models in order, until one answers: for every framework.

An adapter gives `across_models` one attempt per model name. An attempt returns the step's
`AgentResult`, or raises `ModelFailed` (how the model failed: for good, or transiently) or
`ModelConfigError` (it cannot be called as configured). The first result wins, and says which
models failed before it. When every model failed, a transient failure among them makes the
step retryable (`ModelUnavailable`, honouring the provider's Retry-After); otherwise the step
is a `FAILURE` of the first model's kind, naming every failure.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from contracts import AgentResult, AgentSpec, FailureDetails

from .model_errors import (
    ModelConfigError,
    classify_model_error,
    describe_model_error,
    model_failure,
    transient_error,
)

logger = logging.getLogger(__name__)

DEMO_MODEL = "demo"
"""`AgentSpec.model` value (and the default) that selects a framework's offline demo twin."""


class ModelFailed(Exception):
    """A model's attempt failed: `details` when for good, None when a retry may pass."""

    def __init__(self, message: str, details: FailureDetails | None, cause: BaseException | None) -> None:
        super().__init__(message)
        self.details = details
        self.cause = cause

    @classmethod
    def of(cls, err: BaseException, *, model: str, secrets: Sequence[str]) -> ModelFailed:
        """The failure a provider's error stands for, its message free of `secrets`."""
        details = classify_model_error(err, model=model, secrets=secrets)
        return cls(describe_model_error(err, model=model, secrets=secrets), details, err)


async def across_models(
    spec: AgentSpec, framework: str, attempt: Callable[[str], Awaitable[AgentResult]]
) -> AgentResult:
    """The first result of `attempt` over `spec.model` and then `spec.fallback_models`.

    Its `metadata` names the framework and the model that answered, and `failed_models` the
    failures before it.

    Raises:
        ApplicationError: `ModelUnavailable` (retryable) when every model failed and at least
            one failure was transient (rate limit, 5xx, timeout, connection refused).
    """
    names = [spec.model or DEMO_MODEL, *spec.fallback_models]
    failures: list[ModelFailed] = []
    for name in names:
        try:
            result = await attempt(name)
        except ModelFailed as failure:
            logger.warning("agent %s: model %s failed: %s", spec.name, name, failure)
            failures.append(failure)
            continue
        except ModelConfigError as err:  # e.g. the key's env var is unset
            failures.append(ModelFailed.of(err, model=name, secrets=[]))
            continue
        result.metadata = {"framework": framework, "model": name, **(result.metadata or {})}
        if failures:
            result.metadata["failed_models"] = [str(failure) for failure in failures]
        return result
    message = "; ".join(str(failure) for failure in failures)
    transient = [failure for failure in failures if failure.details is None]
    if transient:
        raise transient_error(message, transient[-1].cause)
    first = failures[0].details
    assert first is not None
    return model_failure(
        FailureDetails(type=first.type, message=message),
        metadata={"framework": framework, "model": names[0], "failed_models": [str(f) for f in failures]},
    )
