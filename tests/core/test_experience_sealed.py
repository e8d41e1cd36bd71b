"""The experience index with codec keys, on SQLite and on PostgreSQL: no planted word in the stored
bytes, exact-word recall through the blind index, keys rotated without losing recall, records
written in clear sealed once keys are set; and, with or without keys, a search narrowed to some
projects returns only theirs. The PostgreSQL cases are skipped, saying why, where PostgreSQL is
not installed."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from contracts import ExperienceRecord
from core.codec import CodecKey
from core.database import engine_for
from core.experience import ExperienceIndex, ExperienceSealer, PostgresExperience, SqliteExperience
from core.experience.sealed import MAX_QUERY_WORDS

from ..postgres import PostgresServer

OLD = CodecKey("k1", os.urandom(32))
NEW = CodecKey("k2", os.urandom(32))
START = datetime(2026, 11, 26, tzinfo=UTC)


def entry(turn: int, question: str, answer: str, *, project: str | None = None) -> ExperienceRecord:
    return ExperienceRecord(
        owner_id="session:s",
        turn=turn,
        agent_id="Agent:demo",
        asked_by="alice",
        at=START + timedelta(minutes=turn),
        outcome="answer",
        question=question,
        answer=answer,
        project=project,
    )


@dataclass
class Store:
    """Where an index keeps its records, to open it again with other keys."""

    backend: str
    where: str
    server: PostgresServer | None = None

    def open(self, *keys: CodecKey) -> ExperienceIndex:
        sealer = ExperienceSealer(keys) if keys else None
        if self.backend == "sqlite":
            return SqliteExperience(Path(self.where), sealer)
        return PostgresExperience(self.where, sealer)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        return Store("sqlite", str(tmp_path / "experience.db"))
    return Store("postgresql", request.getfixturevalue("postgres_url"), request.getfixturevalue("postgres"))


def planted() -> str:
    """A word found nowhere else."""
    return f"planted{uuid.uuid4().hex}"


def postgres_files(url: str, server: PostgresServer) -> Iterator[Path]:
    """The files of one database (after a checkpoint wrote its pages out), the server's WAL and log."""
    engine = engine_for(url)
    try:
        with engine.connect() as db:
            db.execute(text("CHECKPOINT"))
            oid = db.execute(text("SELECT oid FROM pg_database WHERE datname = current_database()")).scalar()
    finally:
        engine.dispose()
    data = Path(server.directory) / "data"
    for folder in (data / "base" / str(oid), data / "pg_wal"):
        yield from (path for path in folder.rglob("*") if path.is_file())
    yield Path(server.directory) / "log"


def holds(store: Store, word: str) -> bool:
    """Whether `word` is anywhere in the bytes the store keeps: the SQLite file, its WAL and shared
    memory; the PostgreSQL database's files, WAL and log."""
    if store.backend == "sqlite":
        files = sorted(Path(store.where).parent.glob(Path(store.where).name + "*"))
        assert any(f.name.endswith("-wal") for f in files), "the WAL is read too"
    else:
        assert store.server is not None
        files = list(postgres_files(store.where, store.server))
    return any(word.encode() in path.read_bytes() for path in files if path.exists())


def test_with_keys_no_recorded_word_is_stored_and_recall_still_finds_it(store: Store) -> None:
    secret, sql, control = planted(), planted(), planted()
    sealed = store.open(NEW)
    sealed.record(entry(1, f"remember {secret} please", f"SELECT * FROM orders WHERE note = '{sql}'"))
    in_clear = (
        Store(store.backend, store.where + "-clear", store.server) if store.backend == "sqlite" else store
    )
    clear_index = in_clear.open()
    clear_index.record(entry(2, f"in clear {control}", "ok"))

    assert [m.turn for m in sealed.search(secret)] == [1]
    [found] = sealed.search(sql.upper())
    assert (found.question, found.answer) == (
        f"remember {secret} please",
        f"SELECT * FROM orders WHERE note = '{sql}'",
    ), "a match comes back opened"
    assert holds(in_clear, control), "the same search of the bytes finds a word kept in clear"
    assert not holds(store, secret) and not holds(store, sql)


@pytest.mark.parametrize(
    ("query", "turns", "why"),
    [
        ("Refund", [1], "case does not matter"),
        ("ＲＥＦＵＮＤ", [1], "NFKC: full-width letters are the plain ones"),
        ("STRASSE", [2], "case folding: ß is ss"),
        ("订单", [3], "a Chinese word written apart"),
        ("ZX-4471", [1], "the words of the query, split as the index splits"),
        ("ref", [], "no part of a word (lost against the plain index)"),
        ("删除", [], "no word inside unspaced Chinese text (lost against the plain index)"),
        ("refunds", [], "no other form of a word"),
        ("refund straße", [1, 2], "records holding any of the words"),
        ("", [], "no word, no match"),
    ],
)
def test_the_blind_index_finds_whole_words_normalised(
    store: Store, query: str, turns: list[int], why: str
) -> None:
    index = store.open(NEW)
    index.record(entry(1, "what is the refund code", "ZX-4471"))
    index.record(entry(2, "the office in Große Straße", "closed"))
    index.record(entry(3, "删除订单 订单", "done"))

    assert sorted(m.turn for m in index.search(query, top_k=5)) == turns, why


def test_records_holding_more_of_the_words_come_first_then_newer(store: Store) -> None:
    index = store.open(NEW)
    index.record(entry(1, "cancelled orders", "3 rows"))
    index.record(entry(2, "cancelled orders of Bob", "1 row"))
    index.record(entry(3, "orders today", "8"))

    found = index.search("cancelled orders bob", top_k=5)

    assert [(m.turn, m.score) for m in found] == [(2, 3.0), (1, 2.0), (3, 1.0)]
    assert [m.turn for m in index.search("orders", top_k=2)] == [3, 2], "equals: newer first"


def test_after_a_rotation_records_of_the_old_key_are_still_found_and_new_ones_use_the_new(
    store: Store,
) -> None:
    word = planted()
    store.open(OLD).record(entry(1, f"old {word}", "sealed with k1"))
    rotated = store.open(NEW, OLD)
    rotated.record(entry(2, f"new {word}", "sealed with k2"))

    assert [m.answer for m in rotated.search(word, top_k=5)] == ["sealed with k2", "sealed with k1"]
    assert [m.turn for m in store.open(NEW).search(word, top_k=5)] == [2], (
        "with the old key dropped, its records are no longer found (their words were hashed with it)"
    )
    assert [m.turn for m in store.open(OLD).search(word, top_k=5)] == [1]
    assert not holds(store, word)


def test_records_written_in_clear_are_sealed_once_keys_are_set(store: Store) -> None:
    word = planted()
    in_clear = store.open()
    in_clear.record(entry(1, f"before keys {word}", "kept in clear"))
    assert [m.turn for m in in_clear.search(word)] == [1]

    sealed = store.open(NEW)

    assert [m.answer for m in sealed.search(word)] == ["kept in clear"]
    if store.backend == "sqlite":  # PostgreSQL keeps old row versions until VACUUM FULL (documented)
        assert not holds(store, word)
    assert in_clear.search(word) == [], "without the keys, nothing sealed is searched (or shown)"


def test_a_sealed_text_moved_to_another_record_does_not_open(tmp_path: Path) -> None:
    path = tmp_path / "experience.db"
    index = SqliteExperience(path, ExperienceSealer([NEW]))
    index.record(entry(1, "first question", "first answer"))
    index.record(entry(2, "second question", "second answer"))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE turns SET answer = (SELECT answer FROM turns WHERE turn = 1) WHERE turn = 2")

    with pytest.raises(
        ValueError, match="experience answer of session:s turn 2 sealed with key 'k2' does not open"
    ):
        index.search("second")


def test_a_query_of_thousands_of_words_looks_up_its_first_ones(store: Store) -> None:
    index = store.open(NEW, OLD)
    index.record(entry(1, "cancelled orders", "3 rows"))
    words = [f"w{n}" for n in range(20_000)]

    assert [m.turn for m in index.search(" ".join(["orders", *words]))] == [1]
    assert index.search(" ".join([*words[:MAX_QUERY_WORDS], "orders"])) == [], "past the bound"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=40))
def test_any_text_is_searched_without_error_under_keys(tmp_path: Path, query: str) -> None:
    index = SqliteExperience(tmp_path / "any.db", ExperienceSealer([NEW, OLD]))
    index.record(entry(1, "cancelled orders", "3 rows"))
    found = index.search(query, top_k=5)
    assert [m.turn for m in found] in ([], [1])


@pytest.fixture(params=["clear", "sealed"])
def projects_index(request: pytest.FixtureRequest, store: Store) -> ExperienceIndex:
    index = store.open(*([NEW] if request.param == "sealed" else []))
    index.record(entry(1, "refund orders for shop", "done", project="shop"))
    index.record(entry(2, "refund orders for billing", "done", project="billing"))
    index.record(entry(3, "refund orders without a project", "done"))
    return index


@pytest.mark.parametrize(
    ("projects", "top_k", "turns"),
    [
        (None, 5, [1, 2, 3]),
        (frozenset({"shop"}), 1, [1]),
        (frozenset({"shop", "billing"}), 5, [1, 2]),
        (frozenset({"nowhere"}), 5, []),
        (frozenset(), 5, []),
        (frozenset({None}), 5, [3]),
        (frozenset({None, "billing"}), 5, [2, 3]),
    ],
)
def test_a_search_narrowed_to_projects_finds_only_their_records(
    projects_index: ExperienceIndex, projects: frozenset[str | None] | None, top_k: int, turns: list[int]
) -> None:
    found = projects_index.search("refund orders", top_k=top_k, projects=projects)

    assert sorted(m.turn for m in found) == turns, "narrowed before the limit: shop's is the oldest"
    assert [m.project for m in found if m.turn == 1] == (["shop"] if 1 in turns else [])


def test_a_substring_search_in_clear_is_narrowed_to_projects_too(store: Store) -> None:
    index = store.open()
    index.record(entry(1, "删除订单", "done", project="shop"))
    index.record(entry(2, "删除订单", "done", project="billing"))

    assert [m.turn for m in index.search("订单", top_k=1, projects={"shop"})] == [1]
    assert [m.turn for m in index.search("订单", top_k=5, projects={"billing"})] == [2]
