"""The rules store: saved once, seen by every process that opens the same database (the SQLite
file under the data dir, or PostgreSQL by `SYNAPSE_RULES_URL`); deleted as a tombstone that says
who deleted it. Ids over add/delete sequences: `test_store_ids.py`; old tables: `test_store_migration.py`."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts import ANY_TOOL_RULE, ApprovalRule, NewRule, RuleContext, RuleMatch, RuleScope
from core.rules.store import RuleDeleted, RuleNotFound, RuleStore

NEW_ID = re.compile(r"rule_[0-9A-HJKMNP-TV-Z]{26}")
"""A new rule's id: `rule_` and 26 Crockford base32 characters (time, then randomness)."""


def id_of(rule: ApprovalRule) -> str:
    return rule.rule_id


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest) -> str | None:
    """`SYNAPSE_RULES_URL`: unset (the data dir's SQLite file), or a new PostgreSQL database."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


def test_a_rule_saved_by_one_process_is_read_by_another_and_deleted_for_both(
    url: str | None, tmp_path: Path
) -> None:
    api, worker = RuleStore.at(url, tmp_path), RuleStore.at(url, tmp_path)
    saved = api.add(
        NewRule(
            tool="terminal",
            decision="allow",
            scope="global",
            match=RuleMatch(command_prefix="git status"),
            created_by="olga",
        )
    )
    assert NEW_ID.fullmatch(saved.rule_id), saved.rule_id
    assert saved.created_by == "olga" and saved.created_at.tzinfo is not None and saved.deleted_by is None
    assert worker.get(saved.rule_id) == saved
    assert worker.for_call("terminal", RuleContext()) == [saved]
    removed = api.remove(saved.rule_id, by="bob")
    assert removed == saved.model_copy(update={"deleted_by": "bob", "deleted_at": removed.deleted_at})
    assert removed.deleted_at is not None and removed.deleted_at.tzinfo is not None
    assert worker.for_call("terminal", RuleContext()) == [] and worker.all() == []
    with pytest.raises(RuleDeleted, match=f"rule '{saved.rule_id}' was deleted by bob at 20") as gone:
        worker.get(saved.rule_id)
    assert gone.value.rule == removed, "the tombstone keeps the rule, who deleted it and when"
    with pytest.raises(RuleDeleted, match="deleted by bob"):
        worker.remove(saved.rule_id, by="carol")
    with pytest.raises(RuleDeleted, match="deleted by bob"):  # a second delete changed nothing
        api.get(saved.rule_id)
    with pytest.raises(RuleNotFound, match="no rule 'rule_9'"):
        worker.remove("rule_9", by="bob")
    assert (tmp_path / "rules.db").is_file() == (url is None)


def test_processes_starting_at_once_share_one_table(url: str | None, tmp_path: Path) -> None:
    stores = [RuleStore.at(url, tmp_path) for _ in range(6)]
    with ThreadPoolExecutor(len(stores)) as pool:
        saved = list(
            pool.map(lambda store: store.add(NewRule(tool="sql", decision="allow", scope="global")), stores)
        )

    assert len({rule.rule_id for rule in saved}) == 6 and all(NEW_ID.fullmatch(r.rule_id) for r in saved)
    assert all(sorted(store.all(), key=id_of) == sorted(saved, key=id_of) for store in stores)


def test_a_call_reads_its_tools_rules_and_the_any_tool_ones_of_its_project_and_person(
    url: str | None, tmp_path: Path
) -> None:
    store = RuleStore.at(url, tmp_path)
    made = [
        store.add(NewRule(tool="sql", decision="deny", scope="global")),
        store.add(NewRule(tool="*", decision="ask", scope="global")),
        store.add(NewRule(tool="terminal", decision="deny", scope="global")),
        store.add(NewRule(tool="sql", decision="allow", scope="project", project="/repo")),
        store.add(NewRule(tool="sql", decision="allow", scope="project", project="/other")),
        store.add(NewRule(tool="sql", decision="allow", scope="user", user="alice")),
        store.add(NewRule(tool="sql", decision="allow", scope="user", user="bob")),
    ]
    ids = [r.rule_id for r in store.for_call("sql", RuleContext(project="/repo", user="alice"))]
    assert ids == [made[0].rule_id, made[1].rule_id, made[3].rule_id, made[5].rule_id]
    assert [r.rule_id for r in store.for_call("sql", RuleContext())] == [made[0].rule_id, made[1].rule_id]
    nobody = RuleContext(project="", user="")  # no project or person: their rules do not apply
    assert [r.rule_id for r in store.for_call("sql", nobody)] == [made[0].rule_id, made[1].rule_id]
    assert [r.rule_id for r in store.all(scope=RuleScope.PROJECT)] == [made[3].rule_id, made[4].rule_id]
    assert [r.rule_id for r in store.all(tool="terminal")] == [made[2].rule_id]


TOOLS = st.sampled_from(["sql", "terminal", ANY_TOOL_RULE])
PROJECTS = st.sampled_from([None, "", "/repo", "/other"])
USERS = st.sampled_from([None, "", "alice", "bob"])
RULES = st.lists(
    st.builds(
        NewRule,
        tool=TOOLS,
        decision=st.sampled_from(["allow", "ask", "deny"]),
        scope=st.sampled_from(list(RuleScope)),
        project=PROJECTS,  # any scope with any project or user: also what `match.problems` refuses
        user=USERS,
    ),
    max_size=8,
)
CONTEXTS = st.builds(RuleContext, project=PROJECTS, user=USERS)


def _applies(rule: ApprovalRule, tool: str, context: RuleContext) -> bool:
    """The reference: a rule decides a call when it names the tool (or any tool) and is global,
    or of the call's project, or of its person."""
    if rule.tool not in (tool, ANY_TOOL_RULE):
        return False
    if rule.scope == RuleScope.PROJECT:
        return bool(context.project) and rule.project == context.project
    if rule.scope == RuleScope.USER:
        return bool(context.user) and rule.user == context.user
    return True


@settings(max_examples=60, deadline=None)
@given(rules=RULES, tool=st.sampled_from(["sql", "terminal"]), context=CONTEXTS)
def test_a_call_reads_exactly_the_rules_that_apply_to_it_oldest_first(
    tmp_path_factory: pytest.TempPathFactory, rules: list[NewRule], tool: str, context: RuleContext
) -> None:
    store = RuleStore.at(None, tmp_path_factory.mktemp("rules"))
    saved = [store.add(rule) for rule in rules]
    assert store.for_call(tool, context) == [rule for rule in saved if _applies(rule, tool, context)]
