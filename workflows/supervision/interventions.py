"""Interventions on a session: pause, resume and cancel, as signals and validated updates.

A mixin of `SessionWorkflow`; handlers defined here are registered on it. Validators reject
a command that makes no sense (pausing a paused session, anything on a closed one) before
it reaches history; the signal twins ignore such commands.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts import AuditEntry, LiveSession, SessionControl, TaskChunkType

    from ..session.state import SessionState

from ..ids import session_key_of
from .approvals import ANONYMOUS


def _rejected(message: str, error_type: str) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


class SessionControls:
    """Pause / resume / cancel handlers, sharing the session's state."""

    _state: SessionState

    @property
    def owner_id(self) -> str:
        """The session's workflow id."""
        raise NotImplementedError

    publish: Callable[..., None]
    """Publish a chunk (`SessionWorkflow.publish`)."""

    def _set_status(self, status: str) -> None:
        raise NotImplementedError

    def get_status(self) -> LiveSession:
        """The LiveSession (implemented by the workflow)."""
        raise NotImplementedError

    def _record(self, kind: str, control: SessionControl) -> None:
        now = workflow.now()
        self._state.audit.append(
            AuditEntry(
                kind=kind,
                at=now,
                principal=control.principal or ANONYMOUS,
                channel="http",
                comment=control.reason,
            )
        )
        self._state.last_activity = now

    def _check_open(self) -> None:
        if self._state.cancelled or self._state.status in ("completed", "cancelled"):
            raise _rejected(
                f"session {session_key_of(self.owner_id)!r} is {self._state.status}; it takes no more commands",
                "SessionClosed",
            )

    @workflow.signal
    def pause(self, control: SessionControl) -> None:
        """Start nothing new (no agent step, no tool run) until resumed."""
        if self._state.paused or self._state.cancelled:
            return
        self._state.paused = True
        self._record("paused", control)
        self._set_status("paused")
        self.publish(TaskChunkType.PROGRESS, {"status": "paused", "reason": control.reason})

    @workflow.signal
    def resume(self, control: SessionControl) -> None:
        """Let a paused session go on."""
        if not self._state.paused or self._state.cancelled:
            return
        self._state.paused = False
        self._record("resumed", control)
        self._set_status("waiting_approval" if self._state.pending else "active")
        self.publish(TaskChunkType.PROGRESS, {"status": "resumed", "reason": control.reason})

    @workflow.signal
    def cancel(self, control: SessionControl) -> None:
        """End the session: a pending approval is denied by `system:cancel`."""
        if self._state.cancelled:
            return
        self._state.cancelled = True
        self._state.cancel_reason = control.reason or f"cancelled by {control.principal or ANONYMOUS}"
        self._record("cancelled", control)

    @workflow.update
    def pause_checked(self, control: SessionControl) -> LiveSession:
        """Update twin of `pause`; rejected when closed or already paused."""
        self.pause(control)
        return self.get_status()

    @pause_checked.validator
    def _validate_pause(self, control: SessionControl) -> None:
        self._check_open()
        if self._state.paused:
            raise _rejected("session is already paused", "SessionAlreadyPaused")

    @workflow.update
    def resume_checked(self, control: SessionControl) -> LiveSession:
        """Update twin of `resume`; rejected when closed or not paused."""
        self.resume(control)
        return self.get_status()

    @resume_checked.validator
    def _validate_resume(self, control: SessionControl) -> None:
        self._check_open()
        if not self._state.paused:
            raise _rejected("session is not paused", "SessionNotPaused")

    @workflow.update
    async def cancel_checked(self, control: SessionControl) -> LiveSession:
        """Update twin of `cancel`; answers once the session has closed."""
        self.cancel(control)
        await workflow.wait_condition(lambda: self._state.status == "cancelled")
        return self.get_status()

    @cancel_checked.validator
    def _validate_cancel(self, control: SessionControl) -> None:
        self._check_open()
