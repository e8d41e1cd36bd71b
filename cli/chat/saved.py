"""Saved chats: tags that name sessions, kept on this machine (`~/.synapse/chats.json`).

The conversation itself lives in its session workflow; a tag only remembers its key (and where
and when it was saved), so `/chat resume TAG` works from any REPL, after any crash.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .places import user_dir

TAG = re.compile(r"[\w.@-]{1,64}")


@dataclass(frozen=True)
class SavedChat:
    tag: str
    session_key: str
    project: str
    agent: str
    saved_at: str


class SavedChats:
    """The tags of one user, read from and written to their file at each change."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or user_dir() / "chats.json"

    def all(self) -> list[SavedChat]:
        """Every saved chat, newest first."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as err:
            raise ValueError(f"{self.path}: cannot be read ({err}); move it aside to start afresh") from None
        chats = [SavedChat(**entry) for entry in raw.get("chats", [])]
        return sorted(chats, key=lambda chat: chat.saved_at, reverse=True)

    def get(self, tag: str) -> SavedChat | None:
        return next((chat for chat in self.all() if chat.tag == tag), None)

    def save(self, tag: str, session_key: str, project: str, agent: str) -> SavedChat:
        """Remember `session_key` as `tag` (a tag saved again now names this session)."""
        if not TAG.fullmatch(tag):
            raise ValueError(f"tag {tag!r}: use up to 64 letters, digits, '.', '-', '_' or '@'")
        chat = SavedChat(tag, session_key, project, agent, datetime.now(UTC).isoformat(timespec="seconds"))
        self._write([chat, *(c for c in self.all() if c.tag != tag)])
        return chat

    def delete(self, tag: str) -> SavedChat | None:
        """Forget `tag`; what it named (None: no such tag)."""
        chats = self.all()
        found = next((chat for chat in chats if chat.tag == tag), None)
        if found is not None:
            self._write([chat for chat in chats if chat.tag != tag])
        return found

    def _write(self, chats: list[SavedChat]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"chats": [asdict(c) for c in chats]}, indent=2), encoding="utf-8")
        os.replace(temporary, self.path)  # a REPL killed mid-write leaves the old file whole
