"""The tool activities, run in a Temporal activity context: assessment and running."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity
from temporalio.testing import ActivityEnvironment

from activities.tools.plugin import Tool
from activities.tools.registry import builtin_tools
from activities.tools.runner import ToolActivities
from contracts import AssessRequest, ToolCallRequest, ToolDescriptor, ToolResult, ToolRun
from core.settings import Settings

DELETE_CANCELLED = "DELETE FROM orders WHERE status = 'cancelled'"


@pytest.fixture
async def acts(tmp_path: Path) -> AsyncIterator[ToolActivities]:
    tool_activities = ToolActivities(Settings(data_dir=tmp_path))
    yield tool_activities
    await tool_activities.close()


def sql_call(sql: Any = None, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(
        tool_id="sql", arguments={"sql": sql, **arguments} if sql is not None else arguments
    )


async def assess(acts: ToolActivities, call: ToolCallRequest) -> Any:
    return await ActivityEnvironment().run(acts.assess_tool_call, AssessRequest(call=call))


async def run(acts: ToolActivities, call: ToolCallRequest, interaction_id: str | None = None) -> Any:
    tool_run = ToolRun(owner_id="session:test", interaction_id=interaction_id, call=call)
    return await ActivityEnvironment().run(acts.run_tool, tool_run)


def test_the_builtin_sql_descriptor() -> None:
    sql = builtin_tools()["sql"]

    assert list(builtin_tools()) == ["sql", "terminal", "ask_user"]
    assert sql.approval == "destructive"
    assert sql.permissions == ["read", "write"]
    assert sql.arguments_schema["required"] == ["sql"]
    assert sql.arguments_schema["properties"]["sql"]["type"] == "string"


def test_activities_are_registered_under_their_names(acts: ToolActivities) -> None:
    names = [activity._Definition.must_from_callable(fn).name for fn in acts.activities()]

    assert names == ["assess_tool_call", "run_tool"]


async def test_select_needs_no_approval(acts: ToolActivities) -> None:
    assessment = await assess(acts, sql_call("SELECT * FROM orders"))

    assert assessment.known and not assessment.needs_approval
    assert assessment.reason == "SELECT is read-only"
    assert assessment.summary == "sql: SELECT * FROM orders"
    assert "orders" in assessment.description


async def test_delete_needs_approval(acts: ToolActivities) -> None:
    assessment = await assess(acts, sql_call(DELETE_CANCELLED))

    assert assessment.needs_approval
    assert assessment.reason == "DELETE statement changes data"
    assert assessment.summary == f"sql: {DELETE_CANCELLED}"


async def test_summary_is_one_line_cut_to_80_characters(acts: ToolActivities) -> None:
    long_sql = "UPDATE orders\n   SET status = 'paid'\n WHERE customer IN (" + ", ".join(["'x'"] * 40) + ")"

    summary = (await assess(acts, sql_call(long_sql))).summary

    assert len(summary) == 80 and summary.endswith("…")
    assert summary.startswith("sql: UPDATE orders SET status = 'paid' WHERE")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (sql_call(), "argument 'sql' must be a non-empty string holding one SQL statement; it is missing"),
        (sql_call(42), "argument 'sql' must be a non-empty string holding one SQL statement; got 42"),
        (sql_call("  "), "argument 'sql' must be a non-empty string holding one SQL statement; got '  '"),
    ],
)
async def test_a_bad_sql_argument_needs_approval_with_a_reason(
    acts: ToolActivities, call: ToolCallRequest, expected: str
) -> None:
    assessment = await assess(acts, call)

    assert assessment.needs_approval and assessment.reason == expected


async def test_unknown_tool_is_assessed_as_unknown(acts: ToolActivities) -> None:
    assessment = await assess(acts, ToolCallRequest(tool_id="shell", arguments={"command": "ls"}))

    assert not assessment.known and not assessment.needs_approval
    assert assessment.reason == "no tool named 'shell'; known tools: ask_user, sql, terminal"
    assert assessment.summary == 'shell: {"command": "ls"}'


async def test_policy_never_and_always_override_classification(acts: ToolActivities) -> None:
    sql = acts.tools["sql"]
    sql.descriptor = sql.descriptor.model_copy(update={"approval": "never"})
    never = await assess(acts, sql_call(DELETE_CANCELLED))
    sql.descriptor = sql.descriptor.model_copy(update={"approval": "always"})
    always = await assess(acts, sql_call("SELECT 1"))

    assert (never.needs_approval, never.reason) == (False, "sql never needs approval")
    assert (always.needs_approval, always.reason) == (True, "sql always needs approval")


async def test_run_select_returns_rows(acts: ToolActivities) -> None:
    result = await run(acts, sql_call("SELECT customer FROM orders WHERE status = 'paid' ORDER BY id"))

    assert result.ok and result.tool_id == "sql"
    assert result.content["rows"] == [["Alice"], ["Grace"]]
    assert result.said == "2 rows", "what it amounts to, in the SQL tool's words"


async def test_run_delete_twice_with_one_interaction_applies_it_once(acts: ToolActivities) -> None:
    first = await run(acts, sql_call(DELETE_CANCELLED), interaction_id="tool_1")
    await run(acts, sql_call("INSERT INTO orders VALUES (20, 'Zoe', 5.0, 'cancelled')"))
    retried = await run(acts, sql_call(DELETE_CANCELLED), interaction_id="tool_1")
    remaining = await run(acts, sql_call("SELECT count(*) FROM orders WHERE status = 'cancelled'"))

    assert first.content["rowcount"] == 3 and first.said == "3 rows affected"
    assert retried.metadata["replayed"] is True and retried.content["rowcount"] == 3
    assert remaining.content["rows"] == [[1]]


async def test_run_sql_error_is_a_failed_result(acts: ToolActivities) -> None:
    result = await run(acts, sql_call("SELECT * FROM foo"))

    assert result.ok is False and result.said is None
    assert result.error == "no such table: foo (statement: SELECT * FROM foo)"


async def test_run_unknown_tool_is_a_failed_result(acts: ToolActivities) -> None:
    result = await run(acts, ToolCallRequest(tool_id="shell", arguments={}))

    assert (result.ok, result.tool_id) == (False, "shell")
    assert result.error == "no tool named 'shell'; known tools: ask_user, sql, terminal"


async def test_run_with_a_bad_argument_names_the_field(acts: ToolActivities) -> None:
    result = await run(acts, sql_call(query="SELECT 1"))

    assert result.ok is False
    assert (
        result.error == "argument 'sql' must be a non-empty string holding one SQL statement; it is missing"
    )


class Shout(Tool):
    """A plugin of the test's own: the runner knows it only through the `Tool` interface."""

    DESCRIPTOR = ToolDescriptor(name="shout", description="Say it louder.", approval="always")

    @classmethod
    def from_settings(cls, settings: Settings) -> Shout:
        return cls()

    async def run(self, run: ToolRun) -> ToolResult:
        return ToolResult(tool_id="shout", ok=True, content=str(run.call.arguments["text"]).upper())


async def test_a_new_plugin_is_assessed_and_run_without_the_runner_knowing_its_name(tmp_path: Path) -> None:
    acts = ToolActivities(Settings(data_dir=tmp_path), tools={"shout": Shout.from_settings(Settings())})
    call = ToolCallRequest(tool_id="shout", arguments={"text": "hi"})

    assessment = await assess(acts, call)
    result = await run(acts, call, interaction_id="tool_1")

    assert (assessment.known, assessment.needs_approval) == (True, True)
    assert assessment.summary == 'shout: {"text": "hi"}'
    assert assessment.reason == "shout always needs approval"
    assert (result.ok, result.content) == (True, "HI")
    assert result.said is None, "a plugin that says nothing of its results"


async def test_a_critical_tool_and_its_grants_are_in_the_assessment(acts: ToolActivities) -> None:
    sql = acts.tools["sql"]
    assessed = await assess(acts, sql_call("DELETE FROM orders WHERE id = 1"))
    assert (assessed.critical, assessed.head, assessed.grants) == (
        False,
        "DELETE orders",
        ["session", "session_prefix"],
    )
    sql.descriptor = sql.descriptor.model_copy(update={"critical": True, "allow_grants": False})
    strict = await assess(acts, sql_call("DELETE FROM orders WHERE id = 1"))
    assert strict.critical is True, "the workflow then asks two distinct approvers"
    assert strict.grants == [], "a tool that forbids grants offers none"
