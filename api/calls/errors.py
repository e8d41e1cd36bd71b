"""What the call layer raises: a `CallError` for each way a call to a workflow can fail.

Each says what went wrong in words a person reads; none knows HTTP. `api/errors.py` gives each
kind its status and body (the one place), the Lark channel turns them into toasts. The call that
raises names its workflow for those words (`"session 'abc'"`, `"graph '0b1…'"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


class CallError(Exception):
    """A call that could not be done; `str(err)` says why."""


class NotFound(CallError):
    """No workflow with this id was ever started (or nothing in it has the id asked for)."""


class AlreadyExists(CallError):
    """A workflow with this id is already running."""


class Closed(CallError):
    """The workflow has closed and takes no more commands."""


class Cancelled(Closed):
    """The session was cancelled: a message does not start it again (it would silently begin a new
    conversation). Who cancelled it, when and why, as far as they are known, for channels that
    word the refusal their own way."""

    def __init__(self, message: str, *, by: str | None, at: datetime | None, reason: str | None) -> None:
        super().__init__(message)
        self.by, self.at, self.reason = by, at, reason


class NotAnswered(CallError):
    """The workflow took no decision on the command in time (no worker, or a long task)."""


class Refused(CallError):
    """The workflow refused the command (an update's validator); `error_type` says how, `details` what
    the refusal carries besides its words (an `InteractionRelayed` names the workflow to ask)."""

    def __init__(self, error_type: str | None, message: str, details: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.details = details


@dataclass(frozen=True)
class Problem:
    """One reason input was refused: where it stands in the input, why, and what kind of problem."""

    loc: tuple[str | int, ...]
    """Path of the field in the input model, e.g. `("blueprint", "new_tasks", 0, "assignee_id")`."""
    msg: str
    type: str
    """`unknown_assignee`, `blueprint_refused`, or `missing` (a field the input needs here)."""


class Invalid(CallError):
    """Input refused before anything reached a workflow (an unknown assignee, a blueprint the engine
    would refuse, a blueprint naming another graph, a decision without `approved` on something
    other than a question); `problems` lists each reason."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(
            "; ".join(f"{'.'.join(map(str, p.loc))}: {p.msg}" if p.loc else p.msg for p in self.problems)
        )
