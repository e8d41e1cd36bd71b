"""The experience index: free text in, never FTS5 syntax; whatever is typed, a search answers."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts import ExperienceRecord
from core.experience import ExperienceIndex, words_of


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


RECORD = ExperienceRecord(
    owner_id="session:t",
    turn=0,
    agent_id="Agent:demo",
    asked_by="alice",
    at=datetime(2026, 11, 26, tzinfo=UTC),
    outcome="answer",
    question="how many orders were cancelled",
    answer="3",
)


@pytest.fixture
def index(tmp_path: Path) -> ExperienceIndex:
    index = ExperienceIndex(tmp_path / "experience.db")
    for turn, (question, answer) in enumerate(
        [("delete cancelled orders", "DELETE done: 3 rows affected."), ("删除订单", "已删除")]
    ):
        index.record(
            ExperienceRecord(
                owner_id="session:s",
                turn=turn,
                agent_id="Agent:demo",
                asked_by="alice",
                at=datetime(2026, 11, 26, tzinfo=UTC),
                outcome="answer",
                question=question,
                answer=answer,
            )
        )
    return index


def test_a_nul_byte_in_a_query_separates_words_instead_of_failing(index: ExperienceIndex) -> None:
    found = index.search("cancelled\x00orders")
    assert [match.question for match in found] == ["delete cancelled orders"]
    assert index.search("\x00\x00") == []


@settings(max_examples=200, deadline=None)
@given(query=st.text(max_size=40))
def test_any_text_is_searched_without_error(tmp_path_factory: pytest.TempPathFactory, query: str) -> None:
    index = ExperienceIndex(tmp_path_factory.getbasetemp() / "any-text.db")
    if index.count() == 0:
        index.record(RECORD)
    found = index.search(query)
    assert all(match.question == RECORD.question for match in found)
