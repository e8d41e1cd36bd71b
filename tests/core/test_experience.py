"""The experience index, on SQLite and on PostgreSQL: free text in, never a search syntax; each turn
recorded once; records matching more of the query's words first; whatever is typed, a search
answers. The PostgreSQL cases are skipped, saying why, where PostgreSQL is not installed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import inspect, text

from contracts import ExperienceRecord
from core.database import engine_for
from core.experience import ExperienceIndex, PostgresExperience, SqliteExperience, open_index, words_of
from core.experience.postgres import TRIGRAM_INDEX
from core.settings import Settings

from ..postgres import PostgresServer


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("customer orders id = 7", ["customer", "orders", "id", "=", "7"]),
        ('orders" OR "x', ["orders", "OR", "x"]),
        ("a\x00b", ["a", "b"]),
        ("tab\tand\nnewline\x7fdel", ["tab", "and", "newline", "del"]),
        ("删除订单，再查询。", ["删除订单", "再查询"]),
        ("NEAR(orders) ^first *", ["NEAR", "orders", "first"]),
        ("again again", ["again"]),
    ],
)
def test_words_are_what_is_between_spaces_controls_and_punctuation(query: str, words: list[str]) -> None:
    assert words_of(query) == words


START = datetime(2026, 11, 26, tzinfo=UTC)


def record(
    turn: int, question: str, answer: str, *, agent: str = "Agent:demo", owner: str = "session:s"
) -> ExperienceRecord:
    return ExperienceRecord(
        owner_id=owner,
        turn=turn,
        agent_id=agent,
        asked_by="alice",
        at=START + timedelta(minutes=turn),
        outcome="answer",
        question=question,
        answer=answer,
    )


TURNS = [
    record(0, "delete cancelled orders", "DELETE done: 3 rows affected."),
    record(1, "删除订单", "已删除"),
    record(2, "how many orders are there", "8 orders"),
    record(3, "list the cancelled orders of Bob", "1 row", agent="Agent:ops"),
    record(4, "what is 100% of 5_000", "5000"),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ExperienceIndex]:
    """A new, empty index on each backend."""
    if request.param == "sqlite":
        yield SqliteExperience(tmp_path / "experience.db")
        return
    index = PostgresExperience(request.getfixturevalue("postgres_url"))
    yield index
    index.close()


@pytest.fixture
def index(empty: ExperienceIndex) -> ExperienceIndex:
    for turn in TURNS:
        empty.record(turn)
    return empty


def test_recording_a_turn_again_keeps_the_first(index: ExperienceIndex) -> None:
    index.record(record(0, "something else", "other"))

    assert index.count() == len(TURNS)
    assert [m.answer for m in index.search("delete cancelled orders", top_k=1)] == [TURNS[0].answer]


def test_records_matching_more_words_come_first(index: ExperienceIndex) -> None:
    found = index.search("cancelled orders Bob", top_k=5)

    assert [m.turn for m in found][:2] == [3, 0], "Bob's matches all three words, turn 0 two"
    assert {m.turn for m in found} == {0, 2, 3}, "every record with one of the words, none other"
    assert found[0].score > found[1].score >= found[2].score > 0
    assert found[0].model_dump(exclude={"score"}) == TURNS[3].model_dump()


def test_top_k_and_the_agent_narrow_a_search(index: ExperienceIndex) -> None:
    assert len(index.search("orders", top_k=2)) == 2
    assert index.search("orders", top_k=0) == []
    assert [m.turn for m in index.search("cancelled orders", agent_id="Agent:ops")] == [3]
    assert index.search("cancelled orders", agent_id="Agent:nobody") == []


def test_words_inside_chinese_text_and_short_words_are_found(index: ExperienceIndex) -> None:
    assert [m.turn for m in index.search("订单")] == [1], "two characters: a substring search"
    assert [m.turn for m in index.search("请删除订单")] == [], "a longer word is looked for whole"
    assert [m.turn for m in index.search("删除订单吗 删除订单")] == [1]


def test_case_does_not_matter(index: ExperienceIndex) -> None:
    assert [m.turn for m in index.search("DELETE CANCELLED", top_k=1)] == [0]


def test_percent_and_underscore_are_plain_characters(index: ExperienceIndex) -> None:
    assert [m.turn for m in index.search("100%")] == [4]
    assert [m.turn for m in index.search("5_000")] == [4]
    assert index.search("1%0") == [] and index.search("5_0_") == []


def test_a_nul_byte_in_a_query_separates_words_instead_of_failing(index: ExperienceIndex) -> None:
    found = index.search("cancelled\x00orders", top_k=2)
    assert {match.turn for match in found} == {0, 3}, "both words, as if a space were between them"
    assert index.search("\x00\x00") == []


def test_a_nul_byte_in_a_recorded_turn_is_kept_searchable(empty: ExperienceIndex) -> None:
    empty.record(record(0, "what is in column\x00two", "nothing"))

    (found,) = empty.search("column")
    assert found.question in ("what is in column\x00two", "what is in column\ufffdtwo")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=40))
def test_any_text_is_searched_without_error(index: ExperienceIndex, query: str) -> None:
    found = index.search(query, top_k=len(TURNS))
    assert len(found) <= len(TURNS)
    assert all(match.model_dump(exclude={"score"}) in [t.model_dump() for t in TURNS] for match in found)


def test_postgres_keeps_turns_in_its_own_table_with_a_trigram_index(postgres_url: str) -> None:
    index = PostgresExperience(postgres_url)
    index.record(TURNS[0])
    index.close()

    engine = engine_for(postgres_url)
    try:
        assert sorted(inspect(engine).get_table_names()) == ["experience_turns", "experience_words"]
        with engine.connect() as db:
            indexes = db.execute(
                text("SELECT indexname FROM pg_indexes WHERE tablename = 'experience_turns'")
            )
            assert TRIGRAM_INDEX in {row[0] for row in indexes}
    finally:
        engine.dispose()


def test_the_url_selects_the_backend(tmp_path: Path, postgres: PostgresServer) -> None:
    default = open_index(None, tmp_path)
    file = open_index(f"sqlite:///{tmp_path / 'elsewhere' / 'x.db'}", tmp_path)
    shared = open_index(postgres.url().replace("+psycopg", ""), tmp_path)

    assert isinstance(default, SqliteExperience) and default.path == tmp_path / "experience.db"
    assert isinstance(file, SqliteExperience) and file.path == tmp_path / "elsewhere" / "x.db"
    assert isinstance(shared, PostgresExperience) and shared.count() == 0


@pytest.mark.parametrize("url", ["mysql://db/x", "sqlite://", "experience"])
def test_a_url_naming_no_usable_database_is_refused_saying_what_is_expected(url: str, tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=re.escape("expected sqlite:///path/to/experience.db or postgresql://")
    ):
        open_index(url, tmp_path)


def test_settings_refuse_an_experience_url_of_another_kind() -> None:
    with pytest.raises(ValueError, match="experience_url"):
        Settings(experience_url="mysql://db/x", _env_file=None)
    assert (
        Settings(experience_url="postgresql://u:p@db/x", _env_file=None).experience_url
        == "postgresql://u:p@db/x"
    )
