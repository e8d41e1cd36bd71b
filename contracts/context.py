"""Context an agent asks for."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from pydantic import Field

from .base import Contract


class ContextBuildConfig(Contract):
    """Declares which context an agent needs for a task."""

    task_uuid: UUID = Field(
        alias="task_id", description="The task the context is built for (seed name `task_id`)."
    )
    include_metadata: bool = Field(default=True, description="Include task metadata.")
    include_tool_list: bool = Field(default=True, description="Declare the tools to the model.")
    conversation_history_config: dict[str, Any] | None = Field(
        default=None, description='Which conversation to include, e.g. `{"last_n": 5}`.'
    )
    task_list_config: dict[str, Any] | None = Field(
        default=None, description='Which graph tasks to include, e.g. `{"status_in": ["COMPLETED"]}`.'
    )
    artifact_config: dict[str, Any] | None = Field(
        default=None, description='Which artifact to include, e.g. `{"asset_id": "...", "mode": "SUMMARY"}`.'
    )
    experience_config: dict[str, Any] | None = Field(
        default=None, description='Which past experience to recall, e.g. `{"query": "...", "top_k": 3}`.'
    )
