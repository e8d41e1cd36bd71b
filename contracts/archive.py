"""Archived pages: the older part of a long-lived list (conversation, audit, stream) kept as artifacts.

A workflow keeps the newest items of each list in its state; older ones are written, a page at
a time, into the artifact store by the `archive_page` activity. Each page names the page before
it, so the state only needs the newest page's id (`ArchiveCursor`) however long it runs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Contract
from .messages import UniversalMessage

ArchiveKind = Literal["messages", "audit", "stream"]


class ArchivePage(Contract):
    """One archived page: items `[start, start + len(items))` of a workflow's list."""

    kind: ArchiveKind = Field(description="Which list the items came from.")
    owner_id: str = Field(description="Workflow id of the session or task.")
    start: int = Field(ge=0, description="Absolute index of the first item (0 = the first ever).")
    items: list[Any] = Field(description="The items, oldest first, as JSON.")
    previous: str | None = Field(default=None, description="Artifact id of the page before, if any.")


class ArchiveCursor(Contract):
    """How much of a list is archived, and where the newest archived page is."""

    archived: int = Field(
        default=0, ge=0, description="Items archived so far (absolute index of the first kept)."
    )
    last_page: str | None = Field(default=None, description="Artifact id of the newest archived page.")


class MessageWindow(Contract):
    """Answer of the `get_messages` query: the requested part of what the workflow still keeps."""

    total: int = Field(ge=0, description="Messages in the conversation so far.")
    start: int = Field(ge=0, description="Absolute index of the first message in `messages`.")
    messages: list[UniversalMessage] = Field(description="The messages, oldest first.")
    archive: ArchiveCursor = Field(description="Where the older messages are.")


class MessagesQuery(Contract):
    """Input of the `get_messages` query: up to `limit` messages before index `before`."""

    before: int | None = Field(
        default=None, ge=0, description="Absolute index to page back from; the end when None."
    )
    limit: int = Field(default=50, ge=1, le=500, description="At most this many messages.")


class MessagePage(Contract):
    """Answer of `GET /sessions/{key}/messages`: one page of the conversation, oldest first."""

    session_key: str = Field(description="The session.")
    total: int = Field(ge=0, description="Messages in the conversation so far.")
    start: int = Field(ge=0, description="Absolute index of the first message on this page.")
    messages: list[UniversalMessage] = Field(description="The page, oldest first.")
    next_before: int | None = Field(
        default=None, description="Pass as `before` for the page before this one; None at the beginning."
    )
