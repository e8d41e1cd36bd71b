"""A pause, resume or cancel as an operator sends it, made into what the workflow is sent.

`POST /sessions/{key}/pause|resume|cancel` and `POST /graphs/{id}/pause|resume|cancel` take the
same optional body (a reason, a principal), held to the same limit and sent to the workflow as
one `SessionControl`.
"""

from __future__ import annotations

from contracts import GraphControl, SessionControl
from core.security import Caller
from core.settings import Settings

from .sizes import check_size


def control_of(
    body: SessionControl | GraphControl | None, caller: Caller, settings: Settings
) -> SessionControl:
    """The control the workflow is sent: the body's reason, and the principal the API key names
    (else the body's).

    Raises:
        TooLarge: The reason is over SYNAPSE_MAX_COMMENT_BYTES.
    """
    reason = body.reason if body else None
    check_size("reason", reason, settings.limits.max_comment_bytes, "SYNAPSE_MAX_COMMENT_BYTES")
    return SessionControl(reason=reason, principal=caller.principal or (body.principal if body else None))
