"""Interventions on a supervised run: pause, resume and cancel.

The `check_*` methods are the validators of the update twins: they reject a command that makes
no sense (pausing a paused run, anything on a closed one) before it reaches history; the signal
twins simply ignore such commands. Every accepted intervention is audited.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import AuditKind, ErrorType, Principal, SessionControl, SessionStatus, SessionStatusChanged

    from .state import SupervisedState

from .audit import audit
from .ports import Surface
from .requests import waiting_status

CLOSED = (SessionStatus.COMPLETED, SessionStatus.CANCELLED)
"""Statuses of a run that takes no more commands."""


def _rejected(message: str, error_type: ErrorType) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


class Interventions:
    """Pause / resume / cancel of one run, on its state."""

    def __init__(self, name: str, state: SupervisedState, surface: Surface) -> None:
        """Bind to the run's state; `name` (e.g. "session 'abc'") is used in refusals."""
        self._name = name
        self._state = state
        self._surface = surface

    def pause(self, control: SessionControl) -> None:
        """Start nothing new (no agent step, no tool run) until resumed."""
        if self._state.paused or self._state.cancelled:
            return
        self._state.paused = True
        self._record(AuditKind.PAUSED, control)
        self._surface.show_status(SessionStatus.PAUSED)
        self._surface.publish(SessionStatusChanged(status="paused", reason=control.reason))

    def resume(self, control: SessionControl) -> None:
        """Let a paused run go on."""
        if not self._state.paused or self._state.cancelled:
            return
        self._state.paused = False
        self._record(AuditKind.RESUMED, control)
        self._surface.show_status(
            waiting_status(self._state.pending) if self._state.pending else SessionStatus.ACTIVE
        )
        self._surface.publish(SessionStatusChanged(status="resumed", reason=control.reason))

    def cancel(self, control: SessionControl) -> None:
        """End the run: a pending approval is denied by `system:cancel`."""
        if self._state.cancelled:
            return
        self._state.cancelled = True
        self._state.cancel_reason = (
            control.reason or f"cancelled by {control.principal or Principal.ANONYMOUS}"
        )
        self._record(AuditKind.CANCELLED, control)

    async def cancelled(self) -> None:
        """Wait until the run has closed as cancelled (the cancel update answers then)."""
        await workflow.wait_condition(lambda: self._state.status == SessionStatus.CANCELLED)

    def check_pause(self) -> None:
        """Validator: refused when closed or already paused."""
        self.check_open()
        if self._state.paused:
            raise _rejected(f"{self._name} is already paused", ErrorType.ALREADY_PAUSED)

    def check_resume(self) -> None:
        """Validator: refused when closed or not paused."""
        self.check_open()
        if not self._state.paused:
            raise _rejected(f"{self._name} is not paused", ErrorType.NOT_PAUSED)

    def check_open(self) -> None:
        """Validator: refused when the run is closed or closing."""
        if self._state.cancelled or self._state.status in CLOSED:
            raise _rejected(
                f"{self._name} is {self._state.status}; it takes no more commands", ErrorType.CLOSED
            )

    def _record(self, kind: AuditKind, control: SessionControl) -> None:
        now = workflow.now()
        audit(
            self._state.audit,
            kind,
            control.principal or Principal.ANONYMOUS,
            channel="http",
            comment=control.reason,
            at=now,
        )
        self._state.last_activity = now
