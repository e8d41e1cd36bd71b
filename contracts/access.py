"""Who the API takes a caller for: `GET /me`."""

from __future__ import annotations

from pydantic import Field

from .base import Contract


class CallerView(Contract):
    """Answer of `GET /me`: the principal and role the caller's key gives, so a client shows only
    the actions it may take."""

    principal: str | None = Field(description="The key's principal; None when the API is open.")
    role: str = Field(description="`viewer`, `operator`, `approver` or `admin` (`admin` when open).")
    keys_required: bool = Field(description="Whether the API asks every caller for a key.")
