"""Rule ids are never reused: a deleted rule stays as a tombstone (who deleted it, when), so an old
audit's `rule:<id>` names one rule forever. Over random sequences of saves and deletes, on SQLite
and PostgreSQL, the store agrees with a plain model of the live rules."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts import ANY_TOOL_RULE, ApprovalRule, NewRule, RuleContext, RuleScope
from core.rules.store import RuleDeleted, RuleNotFound, RuleStore, new_rule_id

from .test_store import NEW_ID, _applies


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def new_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], RuleStore]]:
    """Makes an empty store: a new SQLite file, or a new PostgreSQL database (closed afterwards)."""
    opened: list[RuleStore] = []

    def make() -> RuleStore:
        if request.param == "sqlite":
            store = RuleStore.at(None, tmp_path_factory.mktemp("rules"))
        else:
            store = RuleStore(request.getfixturevalue("postgres").new_database())
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def test_a_deleted_rules_id_is_never_given_again_and_says_who_deleted_it(
    new_store: Callable[[], RuleStore],
) -> None:
    store = new_store()
    first = store.add(NewRule(tool="sql", decision="deny", scope="global", created_by="ada"))
    store.remove(first.rule_id, by="bob")
    second = store.add(NewRule(tool="sql", decision="deny", scope="global", created_by="ada"))
    assert second.rule_id != first.rule_id and NEW_ID.fullmatch(second.rule_id)
    assert store.all() == [second]
    with pytest.raises(RuleDeleted) as gone:
        store.get(first.rule_id)
    assert (gone.value.rule.rule_id, gone.value.rule.deleted_by) == (first.rule_id, "bob")
    assert f"rule {first.rule_id!r} was deleted by bob at " in str(gone.value)
    store.close()


def test_new_ids_sort_by_time_and_are_ulids() -> None:
    made = [new_rule_id() for _ in range(200)]
    assert len(set(made)) == 200 and all(NEW_ID.fullmatch(i) for i in made)
    stamps = [i[5:15] for i in made]  # the first 10 characters: 48 bits of milliseconds
    assert stamps == sorted(stamps), "later ids never sort before earlier ones by their time"


@dataclass(frozen=True)
class Add:
    rule: NewRule


@dataclass(frozen=True)
class Delete:
    pick: int
    """Which id ever given (live or deleted) to delete, modulo how many there are."""
    by: str


NEW_RULES = st.builds(
    NewRule,
    tool=st.sampled_from(["sql", "terminal", ANY_TOOL_RULE]),
    decision=st.sampled_from(["allow", "ask", "deny"]),
    scope=st.sampled_from(list(RuleScope)),
    project=st.sampled_from([None, "/repo"]),
    user=st.sampled_from([None, "alice"]),
    created_by=st.sampled_from(["ann", "ada"]),
)
STEPS = st.lists(
    st.one_of(
        st.builds(Add, rule=NEW_RULES),
        st.builds(Delete, pick=st.integers(0, 30), by=st.sampled_from(["ann", "bob"])),
    ),
    max_size=14,
)


@settings(max_examples=25, deadline=None)
@given(steps=STEPS)
def test_over_saves_and_deletes_ids_never_repeat_and_the_live_rules_are_the_models(
    new_store: Callable[[], RuleStore], steps: list[Add | Delete]
) -> None:
    store = new_store()
    live: list[ApprovalRule] = []  # the model: the live rules, oldest first
    deleted_by: dict[str, str] = {}
    ever: list[str] = []  # every id given, in order
    for step in steps:
        if isinstance(step, Add):
            saved = store.add(step.rule)
            ever.append(saved.rule_id)
            live.append(saved)
        elif not ever:
            with pytest.raises(RuleNotFound):
                store.remove("rule_0", by=step.by)
        else:
            rule_id = ever[step.pick % len(ever)]
            if rule_id in deleted_by:
                with pytest.raises(RuleDeleted, match=f"deleted by {deleted_by[rule_id]} "):
                    store.remove(rule_id, by=step.by)
            else:
                removed = store.remove(rule_id, by=step.by)
                assert removed.deleted_by == step.by
                deleted_by[rule_id] = step.by
                live = [rule for rule in live if rule.rule_id != rule_id]
        assert len(set(ever)) == len(ever), "an id was given twice"
        assert store.all() == live
    for tool in ("sql", "terminal"):
        context = RuleContext(project="/repo", user="alice")
        assert store.for_call(tool, context) == [r for r in live if _applies(r, tool, context)]
    store.close()


def test_the_store_file_is_where_the_settings_say(tmp_path: Path) -> None:
    store = RuleStore.at(None, tmp_path)
    store.add(NewRule(tool="sql", decision="allow", scope="global"))
    store.close()
    assert (tmp_path / "rules.db").is_file()
    assert [r.tool for r in RuleStore.at(None, tmp_path).all()] == ["sql"], "closed, then opened again"
