"""A rules table made before ids were unique (ids `rule_<row number>`, deleted rows gone) is brought
up to date by the first store that opens it, on SQLite and PostgreSQL: its rules keep their ids,
new rules get new ones, and deleting one keeps a tombstone. Several processes may open it at once."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Text, delete, inspect

from contracts import NewRule, RuleContext, RuleMatch
from core.database import engine_for
from core.rules.store import RuleDeleted, RuleStore

from .test_store import NEW_ID

OLD = MetaData()
OLD_RULES = Table(  # the table as the store made it before rule ids and tombstones
    "approval_rules",
    OLD,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tool", String(200), nullable=False, index=True),
    Column("scope", String(20), nullable=False),
    Column("project", String(1000)),
    Column("user", String(200)),
    Column("body", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
BEFORE = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
OLD_BODIES = [
    NewRule(tool="sql", decision="deny", scope="global", match=RuleMatch(sql_kind="DROP"), created_by="ada"),
    NewRule(tool="sql", decision="allow", scope="project", project="/shop", created_by="ann"),
    NewRule(tool="terminal", decision="ask", scope="user", user="alice", created_by="alice"),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def old_table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL whose table was made and used by the old store: three rules saved, the last
    deleted (so SQLite would give its row number, 3, to the next rule)."""
    url = (
        f"sqlite:///{tmp_path / 'rules.db'}"
        if request.param == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    engine = engine_for(url)
    OLD.create_all(engine)
    with engine.begin() as db:
        for rule in OLD_BODIES:
            db.execute(
                OLD_RULES.insert().values(
                    tool=rule.tool,
                    scope=str(rule.scope),
                    project=rule.project,
                    user=rule.user,
                    body=rule.model_dump_json(),
                    created_at=BEFORE,
                )
            )
        db.execute(delete(OLD_RULES).where(OLD_RULES.c.id == 3))
    engine.dispose()
    yield url


def test_an_old_tables_rules_keep_their_ids_and_new_ones_are_never_theirs(old_table: str) -> None:
    store = RuleStore(old_table)
    kept = store.all()
    assert [(r.rule_id, r.tool, r.created_by, r.created_at, r.deleted_by) for r in kept] == [
        ("rule_1", "sql", "ada", BEFORE, None),
        ("rule_2", "sql", "ann", BEFORE, None),
    ]
    assert store.get("rule_2").project == "/shop"
    assert [r.rule_id for r in store.for_call("sql", RuleContext(project="/shop"))] == ["rule_1", "rule_2"]

    made = store.add(NewRule(tool="sql", decision="ask", scope="global"))
    assert NEW_ID.fullmatch(made.rule_id), "not rule_3, the row number SQLite would reuse"
    assert store.remove("rule_1", by="bob").deleted_by == "bob"
    with pytest.raises(RuleDeleted, match="rule 'rule_1' was deleted by bob"):
        store.get("rule_1")
    assert [r.rule_id for r in store.all()] == ["rule_2", made.rule_id]
    store.close()

    again = RuleStore(old_table)  # opened again: nothing more to bring up to date
    assert [r.rule_id for r in again.all()] == ["rule_2", made.rule_id]
    engine = engine_for(old_table)
    with engine.connect() as db:
        found = inspect(db)
        assert {"rule_id", "deleted_by", "deleted_at"} <= {
            c["name"] for c in found.get_columns("approval_rules")
        }
        assert any(
            i["unique"] and i["column_names"] == ["rule_id"] for i in found.get_indexes("approval_rules")
        )
    engine.dispose()
    again.close()


def test_processes_opening_an_old_table_at_once_each_bring_it_up_to_date_once(old_table: str) -> None:
    stores = [RuleStore(old_table) for _ in range(6)]
    with ThreadPoolExecutor(len(stores)) as pool:
        seen = list(pool.map(lambda store: [r.rule_id for r in store.all()], stores))
    assert seen == [["rule_1", "rule_2"]] * 6
    for store in stores:
        store.close()
