"""Where a call is assessed: the rules store and the session's profile decide it; a critical tool
keeps its two people; a store that cannot be read makes the call ask, never run unasked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.runner import ToolActivities
from contracts import AssessRequest, NewRule, RuleContext, RuleMatch, ToolAssessment, ToolCallRequest
from core.rules.store import RuleStore
from core.settings import Settings

SELECT = ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT customer FROM orders WHERE id = 1"})
DELETE = ToolCallRequest(tool_id="sql", arguments={"sql": "DELETE FROM orders WHERE id = 1"})


@pytest.fixture
async def acts(tmp_path: Path) -> AsyncIterator[ToolActivities]:
    tool_activities = ToolActivities(Settings(data_dir=tmp_path))
    yield tool_activities
    await tool_activities.close()


async def assess(
    acts: ToolActivities, call: ToolCallRequest, context: RuleContext | None = None
) -> ToolAssessment:
    found: ToolAssessment = await ActivityEnvironment().run(
        acts.assess_tool_call, AssessRequest(call=call, rules=context)
    )
    return found


async def test_an_allow_rule_decides_what_would_ask_and_stays_out_of_what_runs_freely(
    acts: ToolActivities, tmp_path: Path
) -> None:
    saved = RuleStore.at(None, tmp_path).add(
        NewRule(tool="sql", decision="allow", scope="global", match=RuleMatch(sql_table="orders"))
    )
    deleting = await assess(acts, DELETE)
    assert deleting.needs_approval and deleting.rule is not None and deleting.rule.rule_id == saved.rule_id
    assert (deleting.rule.scope, deleting.rule.match) == ("global", RuleMatch(sql_table="orders"))
    selecting = await assess(acts, SELECT)
    assert not selecting.needs_approval and selecting.rule is None, "nothing to decide: it runs freely"


async def test_an_allow_rule_never_decides_a_critical_tools_call(
    acts: ToolActivities, tmp_path: Path
) -> None:
    acts.tools["sql"].descriptor = acts.tools["sql"].descriptor.model_copy(update={"critical": True})
    RuleStore.at(None, tmp_path).add(NewRule(tool="sql", decision="allow", scope="global"))
    assessed = await assess(acts, DELETE)
    assert assessed.needs_approval and assessed.critical and assessed.rule is None, (
        "two people are still asked"
    )
    RuleStore.at(None, tmp_path).add(NewRule(tool="sql", decision="deny", scope="global"))
    denied = await assess(acts, DELETE)
    assert denied.rule is not None and denied.rule.decision == "deny", "a deny still decides"


async def test_an_allow_rule_on_a_program_leaves_a_command_that_can_run_other_code_asked(
    acts: ToolActivities, tmp_path: Path
) -> None:
    """An allow on `git` is not one on every program git can be made to run; a deny on `git` still
    denies it."""
    store = RuleStore.at(None, tmp_path)
    store.add(
        NewRule(tool="terminal", decision="allow", scope="global", match=RuleMatch(command_prefix="git"))
    )
    fsmonitor = ToolCallRequest(tool_id="terminal", arguments={"command": "git -c core.fsmonitor=x status"})
    asked = await assess(acts, fsmonitor)
    assert asked.needs_approval and asked.rule is None
    assert asked.reason == (
        "git -c sets configuration that can run programs (core.fsmonitor, core.pager, alias.*): it can "
        "run other code, so it asks every time (a grant or allow rule on its program does not cover it)"
    )
    assert (asked.head, asked.grants) == (None, ["session"])
    add = await assess(acts, ToolCallRequest(tool_id="terminal", arguments={"command": "git add notes.txt"}))
    assert add.rule is not None and add.rule.decision == "allow" and add.head == "git add"
    denying = store.add(
        NewRule(tool="terminal", decision="deny", scope="global", match=RuleMatch(command_prefix="git"))
    )
    denied = await assess(acts, fsmonitor)
    assert denied.rule is not None and (denied.rule.rule_id, denied.rule.decision) == (
        denying.rule_id,
        "deny",
    )


async def test_the_profile_rules_apply_to_its_sessions_only(acts: ToolActivities) -> None:
    restricted = await assess(acts, DELETE, RuleContext(profile="restricted"))
    assert restricted.rule is not None and restricted.rule.rule_id == "profile:restricted:1"
    assert (await assess(acts, DELETE, RuleContext())).rule is None
    enterprise = await assess(acts, SELECT, RuleContext(profile="enterprise"))
    assert enterprise.needs_approval and enterprise.rule is not None and enterprise.rule.decision == "ask"


async def test_a_rules_store_that_cannot_be_read_makes_the_call_ask(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    acts = ToolActivities(Settings(data_dir=tmp_path, rules_url=f"sqlite:///{blocked}/rules.db"))
    assessed = await assess(acts, SELECT)
    assert assessed.needs_approval and assessed.rule is None
    assert assessed.reason == "the approval rules could not be read (FileExistsError): a person is asked"
    await acts.close()
