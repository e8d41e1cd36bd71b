"""Human interventions on a running task graph."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from pydantic import Field, StrictInt

from .base import Contract
from .principals import PersonId


class InterventionRequest(Contract):
    """An operator's request to pause, resume or roll back part of a graph."""

    intervention_type: Literal["ROLLBACK_AND_MODIFY", "PAUSE", "RESUME"] = Field(description="What to do.")
    target_task_uuid: UUID = Field(
        alias="target_task_id",
        description="Engine-assigned UUID of the task concerned (seed name `target_task_id`).",
    )
    rollback_to_version: StrictInt | None = Field(
        default=None, description="Version whose inputs the re-run starts from (ROLLBACK_AND_MODIFY)."
    )
    new_input_data: dict[str, Any] | None = Field(
        default=None, description="Inputs that replace the old ones on re-run."
    )
    new_assignee_id: str | None = Field(
        default=None, description="Assignee that replaces the old one on re-run."
    )
    comment: str = Field(description="Why; recorded in the audit trail.")
    principal: PersonId | None = Field(
        default=None,
        description="Who (ignored when the API key names the caller; recorded as given when open).",
    )
