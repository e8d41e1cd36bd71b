"""The offline `Agent:demo` rules: chat text, task inputs and tool-result reports."""

from __future__ import annotations

import json
from typing import Any

import pytest

from activities.agents.demo import decide
from contracts import (
    AgentResult,
    AgentStepInput,
    FinalAnswer,
    PlanBlueprint,
    ToolCallRequest,
    ToolResult,
    UniversalMessage,
)

HELLO_PLAN = {"new_tasks": [{"task_id": "hello", "input_data": {"echo": "hi"}, "assignee_id": "Agent:demo"}]}


def chat(text: str, tools: list[str] | None = None) -> AgentResult:
    """One chat step whose latest message is `text` from a user."""
    step = AgentStepInput(
        agent_id="Agent:demo",
        owner_id="session:test",
        messages=[
            UniversalMessage(role="user", content="earlier message"),
            UniversalMessage(role="assistant", content="earlier answer"),
            UniversalMessage(role="user", content=text, name="alice"),
        ],
        tools=tools or [],
    )
    return decide(step)


def task(input_data: dict[str, Any], messages: list[UniversalMessage] | None = None) -> AgentResult:
    """One graph-task step with `input_data`."""
    step = AgentStepInput(
        agent_id="Agent:demo", owner_id="graph:g:task:t:v1", input_data=input_data, messages=messages or []
    )
    return decide(step)


def tool_message(content: Any, name: str = "sql") -> UniversalMessage:
    return UniversalMessage(role="tool", name=name, tool_call_id="tool_1", content=content)


def after_tool(content: Any, name: str = "sql") -> AgentResult:
    """A chat step whose latest message is the tool message `content`."""
    step = AgentStepInput(
        agent_id="Agent:demo",
        owner_id="session:test",
        messages=[UniversalMessage(role="user", content="DELETE FROM orders"), tool_message(content, name)],
    )
    return decide(step)


def answer_text(result: AgentResult) -> str:
    assert result.status == "SUCCESS"
    assert isinstance(result.output.intent, FinalAnswer)
    content = result.output.intent.content
    assert isinstance(content, str)
    return content


def sql_result(**content: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"columns": [], "rows": [], "rowcount": None, "truncated": False, "note": None}
    return ToolResult(tool_id="sql", ok=True, content={**base, **content}).model_dump(mode="json")


def test_bang_text_asks_for_the_terminal_tool() -> None:
    result = chat("!  ls -la /tmp ")

    assert result.output.intent == ToolCallRequest(tool_id="terminal", arguments={"command": "ls -la /tmp"})
    assert "terminal" in result.output.thought


def test_a_bare_bang_is_answered_not_run() -> None:
    assert "put a command after `!`" in answer_text(chat("!"))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("SELECT * FROM orders", "SELECT"),
        ("select count(*) from orders where status = 'paid'", "SELECT"),
        ("DELETE FROM orders WHERE status = 'cancelled'", "DELETE"),
        ("INSERT INTO orders (customer, amount, status) VALUES ('Ivan', 9.5, 'pending')", "INSERT"),
        ("UPDATE orders SET status = 'paid' WHERE id = 5", "UPDATE"),
        ("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "CREATE"),
        ("DROP TABLE notes", "DROP"),
        ("ALTER TABLE orders ADD COLUMN note TEXT", "ALTER"),
        ("WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT customer FROM big", "SELECT"),
        ("PRAGMA table_info(orders)", "PRAGMA"),
    ],
)
def test_sql_statements_ask_for_the_sql_tool(text: str, kind: str) -> None:
    result = chat(f"  {text}\n")

    assert result.output.intent == ToolCallRequest(tool_id="sql", arguments={"sql": text})
    assert f"{kind} statement" in result.output.thought


@pytest.mark.parametrize(
    "text",
    [
        "hello there",
        "what can you do?",
        "delete everything please",
        "select everything please",
        "update please",
        "insert coin",
        "drop it",
        "create something nice",
        "hello",
        "don't delete anything",
        "with love",
    ],
)
def test_english_is_not_mistaken_for_sql(text: str) -> None:
    content = answer_text(chat(text))

    assert f'"{text}"' in content
    assert "`orders` table" in content and "`!command`" in content and "plan: {json}" in content


def test_plan_text_becomes_a_blueprint() -> None:
    result = chat("plan: " + json.dumps(HELLO_PLAN))

    assert isinstance(result.output.intent, PlanBlueprint)
    assert [t.task_id for t in result.output.intent.new_tasks] == ["hello"]
    assert "hello" in result.output.thought


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plan: {not json", "the plan is not valid JSON"),
        ("plan: [1, 2]", "must be a JSON object"),
        (
            'plan: {"new_tasks": [{"task_id": "a", "input_data": {}}]}',
            "new_tasks.0.assignee_id: Field required",
        ),
        ('plan: {"new_tasks": [], "bogus": 1}', "bogus: Extra inputs are not permitted"),
        ("plan: {}", "the plan has no tasks"),
    ],
)
def test_unusable_plan_text_is_explained_not_failed(text: str, expected: str) -> None:
    content = answer_text(chat(text))

    assert content.startswith("I could not use that plan: ")
    assert expected in content


def test_tool_not_declared_to_the_agent_is_refused_in_words() -> None:
    content = answer_text(chat("!ls", tools=["sql"]))

    assert content == "I cannot use the terminal tool here; the tools I may use are: sql."


def test_a_step_without_messages_gets_the_help_answer() -> None:
    result = decide(AgentStepInput(agent_id="Agent:demo", owner_id="session:test"))

    assert "did not understand an empty message" in answer_text(result)


def test_decide_is_deterministic() -> None:
    assert chat("DELETE FROM orders") == chat("DELETE FROM orders")


def test_reports_a_delete_result() -> None:
    result = after_tool(sql_result(statement="DELETE", rowcount=3))

    assert answer_text(result) == "DELETE done: 3 rows affected."
    assert "sql result came back" in result.output.thought


def test_reports_ddl_without_a_row_count() -> None:
    assert answer_text(after_tool(sql_result(statement="CREATE"))) == "CREATE done."


def test_reports_select_rows_as_a_compact_table() -> None:
    content = sql_result(
        statement="SELECT", columns=["id", "customer"], rows=[[2, "Bob"], [4, None]], rowcount=2
    )

    assert answer_text(after_tool(content)) == "SELECT returned 2 rows:\nid | customer\n2 | Bob\n4 | NULL"


def test_reports_truncation_and_cuts_long_tables() -> None:
    rows = [[i] for i in range(12)]
    content = sql_result(
        statement="SELECT",
        columns=["id"],
        rows=rows,
        rowcount=50,
        truncated=True,
        note="showing the first 12 of 50 rows",
    )

    text = answer_text(after_tool(content))

    assert text.startswith("SELECT returned 50 rows:\nid\n0\n")
    assert "… and 2 more" in text
    assert text.endswith("(showing the first 12 of 50 rows)")


def test_reports_an_empty_select() -> None:
    content = sql_result(statement="SELECT", columns=["id"], rows=[], rowcount=0)

    assert answer_text(after_tool(content)) == "SELECT returned 0 rows."


def test_reports_a_denial_with_the_persons_comment() -> None:
    denial = {"denied": True, "decided_by": "alice", "message": "not now", "reason": None}

    result = after_tool(denial)

    assert answer_text(result) == 'I did not run sql: denied by alice — "not now".'
    assert "denied" in result.output.thought


def test_reports_a_timeout_denial_with_its_reason() -> None:
    denial = {"denied": True, "decided_by": "system:timeout", "message": None, "reason": "approval timed out"}

    assert (
        answer_text(after_tool(denial)) == "I did not run sql: denied by system:timeout (approval timed out)."
    )


def test_reports_a_tool_error() -> None:
    failed = ToolResult(tool_id="sql", ok=False, error="no such table: foo").model_dump(mode="json")

    assert answer_text(after_tool(failed)) == "sql failed: no such table: foo"


def test_reports_another_tools_text_output() -> None:
    done = ToolResult(tool_id="terminal", ok=True, content="a.txt\nb.txt").model_dump(mode="json")

    assert answer_text(after_tool(done, name="terminal")) == "terminal finished:\na.txt\nb.txt"


@pytest.mark.parametrize(
    ("input_data", "intent"),
    [
        (
            {"sql": "DELETE FROM orders WHERE id = 1"},
            ToolCallRequest(tool_id="sql", arguments={"sql": "DELETE FROM orders WHERE id = 1"}),
        ),
        ({"command": "echo hi"}, ToolCallRequest(tool_id="terminal", arguments={"command": "echo hi"})),
        ({"echo": {"answer": 42}}, FinalAnswer(content={"answer": 42})),
        ({"city": "Paris", "n": 3}, FinalAnswer(content={"city": "Paris", "n": 3})),
        ({"sleep_seconds": 0, "x": 1}, FinalAnswer(content={"sleep_seconds": 0, "x": 1})),
    ],
)
def test_task_input_rules(input_data: dict[str, Any], intent: Any) -> None:
    result = task(input_data)

    assert result.status == "SUCCESS"
    assert result.output.intent == intent
    assert result.output.thought


@pytest.mark.parametrize("plan", [HELLO_PLAN, json.dumps(HELLO_PLAN)])
def test_task_plan_input_becomes_a_blueprint(plan: Any) -> None:
    result = task({"plan": plan})

    assert result.output.intent == PlanBlueprint.model_validate(HELLO_PLAN)


@pytest.mark.parametrize(
    ("fail", "failure_type", "message"),
    [
        ("disk on fire", "TOOL_EXECUTION_FAILED", "disk on fire"),
        (True, "TOOL_EXECUTION_FAILED", "the task input asked the demo agent to fail"),
        ({"type": "RESOURCE_UNAVAILABLE", "message": "no GPU"}, "RESOURCE_UNAVAILABLE", "no GPU"),
    ],
)
def test_task_fail_input_is_a_failure_result(fail: Any, failure_type: str, message: str) -> None:
    result = task({"fail": fail, "echo": "ignored"})

    assert result.status == "FAILURE"
    assert result.failure_details is not None
    assert (result.failure_details.type, result.failure_details.message) == (failure_type, message)


@pytest.mark.parametrize(
    ("input_data", "expected"),
    [
        ({"sql": 42}, "input_data.sql must be a non-empty string, got 42"),
        ({"command": ""}, "input_data.command must be a non-empty string, got ''"),
        ({"plan": {"new_tasks": "nope"}}, "input_data.plan: the plan is not a valid PlanBlueprint"),
    ],
)
def test_unusable_task_inputs_fail_validation(input_data: dict[str, Any], expected: str) -> None:
    result = task(input_data)

    assert result.status == "FAILURE"
    assert result.failure_details is not None
    assert result.failure_details.type == "VALIDATION_ERROR"
    assert expected in result.failure_details.message


def test_task_reports_the_tool_result_after_its_call() -> None:
    result = task(
        {"sql": "DELETE FROM orders"}, messages=[tool_message(sql_result(statement="DELETE", rowcount=1))]
    )

    assert answer_text(result) == "DELETE done: 1 row affected."
