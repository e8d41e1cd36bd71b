"""An unexpected error in an update handler is its caller's failure, never a wedged workflow task.

After its validator accepted it, an update handler that raises anything but a Temporal failure
fails the workflow task, which is then retried forever. `answered_as_failure` turns such an error
into an `ApplicationError`: the update fails with the reason, and the graph goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from temporalio import workflow
from temporalio.exceptions import ApplicationError, FailureError

UNEXPECTED = "Unexpected"
"""`ApplicationError.type` of an update that failed for an unexpected reason (a 500)."""


@contextmanager
def answered_as_failure(what: str) -> Iterator[None]:
    """Run an update's work; an unexpected error fails the update (naming `what`), not the task."""
    try:
        yield
    except FailureError:
        raise
    except Exception as err:
        workflow.logger.exception("%s failed", what)
        raise ApplicationError(f"{what} failed: {err!r}", type=UNEXPECTED, non_retryable=True) from err
