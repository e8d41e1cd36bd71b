"""The experience index: finished turns and task results, searchable by what was asked and answered.

The workers record (`activities/experience`), the agents' context and `GET /experience` search.
Where it lives is chosen by `SYNAPSE_EXPERIENCE_URL` (`open_index`):

- unset, or `sqlite:///path`: one SQLite file with an FTS5 trigram index (`sqlite.py`), shared by
  the processes of one machine;
- `postgresql://...`: a table in PostgreSQL (`postgres.py`), shared by every machine.

Both take free text (`query.py`), record each turn once, and rank records matching more of the
query's words first. With `SYNAPSE_CODEC_KEYS` set, both keep questions and answers sealed and
search a blind index of their words (`sealed.py`). Each record keeps its session's project, and a
search may be narrowed to some projects (a project-scoped API key's). Methods block: async
callers use `asyncio.to_thread`.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Protocol

from sqlalchemy.exc import ArgumentError

from contracts import ExperienceMatch, ExperienceRecord

from ..database import is_sqlite, store_url
from ..settings import Settings
from .postgres import PostgresExperience
from .query import words_of
from .sealed import ExperienceSealer, sealer_of
from .sqlite import FILE_NAME, SqliteExperience

__all__ = [
    "ExperienceIndex",
    "ExperienceSealer",
    "PostgresExperience",
    "SqliteExperience",
    "index_for",
    "open_index",
    "words_of",
]


class ExperienceIndex(Protocol):
    """Finished turns, recorded once and searched by relevance."""

    def record(self, entry: ExperienceRecord) -> None:
        """Index one finished turn; a record already there (same owner and turn) is left as it is."""

    def search(
        self,
        query: str,
        top_k: int = 3,
        *,
        agent_id: str | None = None,
        projects: Collection[str | None] | None = None,
    ) -> list[ExperienceMatch]:
        """The `top_k` records best matching `query`, best first: of one agent when `agent_id` is
        given, of those projects only when `projects` is (None: of every project, or none; a None
        among them: the records of no project)."""

    def count(self) -> int:
        """Records indexed."""


def index_for(settings: Settings) -> ExperienceIndex:
    """The index of these settings: at `experience_url`, sealed with the codec keys when set."""
    return open_index(settings.experience_url, settings.data_dir, sealer_of(settings.temporal.codec_keys))


def open_index(url: str | None, data_dir: Path, sealer: ExperienceSealer | None = None) -> ExperienceIndex:
    """The index at `url` (`SYNAPSE_EXPERIENCE_URL`), or `<data_dir>/experience.db` when it is None;
    sealed with `sealer` when given (`sealed.py`).

    Raises:
        ValueError: The URL names neither a SQLite file nor a PostgreSQL database.
    """
    if url is None:
        return SqliteExperience(Path(data_dir) / FILE_NAME, sealer)
    try:
        parsed = store_url(url)
    except ArgumentError:
        parsed = None
    if parsed is not None and is_sqlite(parsed) and parsed.database not in (None, "", ":memory:"):
        return SqliteExperience(Path(parsed.database), sealer)
    if parsed is not None and parsed.get_backend_name() == "postgresql":
        return PostgresExperience(parsed, sealer)
    shown = parsed.render_as_string(hide_password=True) if parsed is not None else url
    raise ValueError(
        f"SYNAPSE_EXPERIENCE_URL {shown!r}: expected "
        "sqlite:///path/to/experience.db or postgresql://user:password@host/database"
    )
