"""The ADK adapter: the demo-adk twin of `Agent:demo`, and real SDK calls against the loopback fake."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.agents import step as agents
from activities.agents.adk import tools as adk_tools
from activities.agents.adk.agent import adk_step
from activities.agents.demo import decide
from activities.agents.model_errors import TRANSIENT_ERROR_TYPE
from activities.agents.step import AgentActivities
from contracts import (
    AgentResult,
    AgentSpec,
    AgentStepInput,
    FinalAnswer,
    PlanBlueprint,
    ToolCallBatch,
    ToolCallRequest,
    ToolResult,
    UniversalMessage,
)
from core.settings import Settings
from tests.activities.agents.demo_tools import TOOLS
from tests.fakes.chat_completions import FakeChatCompletions, Reply, fake_chat_completions

KEY = "sk-test-SECRET-0123456789"
DEMO_ADK = AgentSpec(name="demo-adk", framework="adk", model="demo", tools=["sql", "terminal"])
HELLO_PLAN = {"new_tasks": [{"task_id": "hello", "input_data": {"echo": "hi"}, "assignee_id": "Agent:demo"}]}


def user(text: str) -> UniversalMessage:
    return UniversalMessage(role="user", content=text, name="alice")


def sql_call(sql: str, call_id: str | None = "call_1") -> UniversalMessage:
    call = ToolCallRequest(tool_id="sql", arguments={"sql": sql}, call_id=call_id)
    return UniversalMessage(role="assistant", content={"tool_call": call.model_dump(mode="json")})


def sql_result(call_id: str | None = "call_1", rowcount: int = 3) -> UniversalMessage:
    result = ToolResult(tool_id="sql", ok=True, content={"statement": "DELETE", "rowcount": rowcount})
    return UniversalMessage(
        role="tool", name="sql", tool_call_id=call_id, content=result.model_dump(mode="json")
    )


def step(
    messages: list[UniversalMessage], spec: AgentSpec = DEMO_ADK, input_data: dict[str, Any] | None = None
) -> AgentStepInput:
    return AgentStepInput(
        agent_id=f"Agent:{spec.name}",
        owner_id="session:test",
        messages=messages,
        input_data=input_data,
        tools=spec.tools,
        agent=spec,
    )


DENIAL = UniversalMessage(
    role="tool",
    name="sql",
    tool_call_id="call_1",
    content={"denied": True, "decided_by": "bob", "message": "not now", "reason": "a person denied it"},
)
TWIN_CASES: dict[str, tuple[list[UniversalMessage], dict[str, Any] | None]] = {
    "sql": (
        [user("hi"), UniversalMessage(role="assistant", content="hello"), user("SELECT * FROM orders")],
        None,
    ),
    "terminal": ([user("!ls -la")], None),
    "tool result": ([user("DELETE FROM orders"), sql_call("DELETE FROM orders"), sql_result()], None),
    "denial": ([user("DELETE FROM orders"), sql_call("DELETE FROM orders"), DENIAL], None),
    "plain text": ([user("what can you do?")], None),
    "plan": ([user("plan: " + json.dumps(HELLO_PLAN))], None),
    "task sql": ([], {"sql": "SELECT 1"}),
    "task echo": ([], {"echo": {"a": [1, 2]}}),
    "task fail": ([], {"fail": {"type": "TOOL_EXECUTION_FAILED", "message": "boom"}}),
}


@pytest.mark.parametrize("case", TWIN_CASES)
async def test_demo_adk_is_the_twin_of_the_demo_agent(case: str) -> None:
    messages, input_data = TWIN_CASES[case]
    the_step = step(messages, input_data=input_data)

    twin = await adk_step(the_step, TOOLS)
    demo = decide(the_step)

    assert twin.status == demo.status
    assert twin.failure_details == demo.failure_details
    intent = twin.output.intent
    if isinstance(intent, ToolCallRequest):
        assert intent.call_id  # the model's id, which the tool result goes back with
        intent = intent.model_copy(update={"call_id": None})
    assert intent == demo.output.intent
    if demo.status == "SUCCESS":
        assert twin.output.thought == demo.output.thought
    assert twin.metadata and twin.metadata["framework"] == "adk" and twin.metadata["model"] == "demo"


async def test_demo_adk_reports_a_result_paired_by_tool_name_in_old_histories() -> None:
    # Before call ids, tool messages carried the interaction id: pairing falls back to the tool.
    messages = [user("DELETE FROM orders"), sql_call("DELETE FROM orders", None), sql_result("tool_1", 2)]

    result = await adk_step(step(messages), TOOLS)

    assert result.output.intent == FinalAnswer(content="DELETE done: 2 rows affected.")


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeChatCompletions]:
    """The stand-in with this module's key, which says SECRET for the redaction checks (replaces
    the shared `fake` of conftest.py)."""
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    async with fake_chat_completions() as server:
        yield server


def remote(fake: FakeChatCompletions, **fields: Any) -> AgentSpec:
    spec = {
        "name": "analyst",
        "framework": "adk",
        "model": "gpt-test",
        "base_url": fake.base_url,
        "api_key_env": "FAKE_LLM_KEY",
        "instruction": "You are careful. Answer as {json} when asked.",
        **fields,
    }
    return AgentSpec.model_validate(spec)


def answer(result: AgentResult) -> Any:
    assert result.status == "SUCCESS", result.failure_details
    assert isinstance(result.output.intent, FinalAnswer)
    return result.output.intent.content


async def test_a_tool_call_round_trip(fake: FakeChatCompletions) -> None:
    spec = remote(fake)
    fake.enqueue(fake.tool_calls([("call_abc", "sql", '{"sql": "DELETE FROM orders"}')], content="Deleting."))

    first = await adk_step(step([user("clean up")], spec), TOOLS)

    assert first.output.intent == ToolCallRequest(
        tool_id="sql", arguments={"sql": "DELETE FROM orders"}, call_id="call_abc"
    )
    assert first.output.thought == "Deleting."
    assert first.metadata == {
        "framework": "adk",
        "model": "gpt-test",
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    [request] = fake.requests
    assert request["model"] == "gpt-test" and request["authorization"] == f"Bearer {KEY}"
    assert request["messages"][0]["role"] == "system"
    assert "Answer as {json} when asked." in request["messages"][0]["content"]
    assert request["messages"][1:] == [{"role": "user", "content": "clean up"}]
    assert [t["function"]["name"] for t in request["tools"]] == ["sql", "ask_user"], (
        "ask_user is declared to every agent"
    )
    assert request["tools"][0]["function"]["parameters"] == TOOLS["sql"].arguments_schema

    messages = [user("clean up"), sql_call("DELETE FROM orders", "call_abc"), sql_result("call_abc")]
    second = await adk_step(step(messages, spec), TOOLS)

    assert answer(second).startswith("Done: {")
    sent = fake.requests[1]["messages"][2:]
    assert sent[0]["tool_calls"][0]["id"] == "call_abc"
    assert sent[1]["role"] == "tool" and sent[1]["tool_call_id"] == "call_abc"
    assert json.loads(sent[1]["content"])["content"] == {"statement": "DELETE", "rowcount": 3}


async def test_the_adapter_never_runs_a_tool(
    fake: FakeChatCompletions, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    async def record(self: adk_tools.DeclaredTool, **_: Any) -> Any:
        ran.append(self.name)
        return {"ok": True}

    monkeypatch.setattr(adk_tools.DeclaredTool, "run_async", record)

    result = await adk_step(step([user("SELECT * FROM orders")], remote(fake)), TOOLS)

    assert isinstance(result.output.intent, ToolCallRequest)
    assert ran == [] and len(fake.requests) == 1


async def test_two_calls_in_one_turn_are_a_batch_in_order(fake: FakeChatCompletions) -> None:
    fake.enqueue(
        fake.tool_calls([("c1", "sql", '{"sql": "SELECT 1"}'), ("c2", "terminal", '{"command": "ls"}')])
    )
    spec = remote(fake, tools=["sql", "terminal"])

    result = await adk_step(step([user("both")], spec), TOOLS)

    assert result.output.intent == ToolCallBatch(
        calls=[
            ToolCallRequest(tool_id="sql", arguments={"sql": "SELECT 1"}, call_id="c1"),
            ToolCallRequest(tool_id="terminal", arguments={"command": "ls"}, call_id="c2"),
        ]
    )
    assert result.output.thought == "I call sql, terminal."


@pytest.mark.parametrize(
    ("status", "code", "failure"),
    [(401, "invalid_api_key", "AUTHENTICATION_FAILED"), (429, "insufficient_quota", "QUOTA_EXCEEDED")],
)
async def test_permanent_errors_are_failures_without_secrets(
    fake: FakeChatCompletions, status: int, code: str, failure: str
) -> None:
    fake.enqueue(fake.error(status, f"Incorrect API key provided: {KEY}.", code))

    result = await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert result.status == "FAILURE" and result.failure_details
    assert result.failure_details.type == failure
    assert f"model 'gpt-test' failed (HTTP {status} {code})" in result.failure_details.message
    assert KEY not in result.model_dump_json() and "SECRET" not in result.model_dump_json()


@pytest.mark.parametrize(("status", "code"), [(429, "rate_limit_exceeded"), (500, None), (503, None)])
async def test_transient_errors_are_retried_by_temporal(
    fake: FakeChatCompletions, status: int, code: str | None
) -> None:
    fake.enqueue(fake.error(status, "try again later", code))

    with pytest.raises(ApplicationError) as caught:
        await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert caught.value.type == TRANSIENT_ERROR_TYPE and not caught.value.non_retryable
    assert f"HTTP {status}" in caught.value.message and KEY not in caught.value.message


async def test_an_unreachable_endpoint_is_transient() -> None:
    spec = AgentSpec(name="a", framework="adk", model="m", base_url="http://127.0.0.1:9/v1")

    with pytest.raises(ApplicationError) as caught:
        await adk_step(step([user("hi")], spec), TOOLS)

    assert caught.value.type == TRANSIENT_ERROR_TYPE
    assert "connection failed" in caught.value.message


async def test_a_missing_key_env_var_is_an_authentication_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_KEY", raising=False)
    spec = AgentSpec(
        name="a", framework="adk", model="m", base_url="http://127.0.0.1:9/v1", api_key_env="NOT_SET_KEY"
    )

    result = await adk_step(step([user("hi")], spec), TOOLS)

    assert result.failure_details and result.failure_details.type == "AUTHENTICATION_FAILED"
    assert "'NOT_SET_KEY'" in result.failure_details.message


BAD_CALLS = {
    "malformed json": (("bad1", "sql", '{"sql": "SELECT 1"'), "not valid JSON"),
    "unknown tool": (("bad1", "rm_rf", "{}"), "there is no tool named 'rm_rf'; the tools are: ask_user, sql"),
    "schema": (("bad1", "sql", '{"query": "SELECT 1"}'), "'sql' is a required property"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
async def test_a_bad_call_is_sent_back_once_then_corrected(fake: FakeChatCompletions, case: str) -> None:
    bad, problem = BAD_CALLS[case]
    fake.enqueue(fake.tool_calls([bad]), fake.tool_calls([("good1", "sql", '{"sql": "SELECT 1"}')]))

    result = await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert result.output.intent == ToolCallRequest(
        tool_id="sql", arguments={"sql": "SELECT 1"}, call_id="good1"
    )
    assert len(fake.requests) == 2
    *_, asked, told = fake.requests[1]["messages"]
    assert asked["tool_calls"][0]["id"] == "bad1"
    assert told["role"] == "tool" and told["tool_call_id"] == "bad1"
    assert problem in json.loads(told["content"])["error"]


@pytest.mark.parametrize("case", BAD_CALLS)
async def test_a_call_still_bad_after_one_correction_is_a_validation_error(
    fake: FakeChatCompletions, case: str
) -> None:
    bad, problem = BAD_CALLS[case]
    fake.enqueue(fake.tool_calls([bad]), fake.tool_calls([bad]))

    result = await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert result.status == "FAILURE" and result.failure_details
    assert result.failure_details.type == "VALIDATION_ERROR"
    assert problem in result.failure_details.message
    assert len(fake.requests) == 2


async def test_a_good_call_beside_a_bad_one_is_asked_again_too(fake: FakeChatCompletions) -> None:
    fake.enqueue(fake.tool_calls([("ok1", "sql", '{"sql": "SELECT 1"}'), ("bad1", "nope", "{}")]))
    fake.enqueue(fake.text("Sorry, I only have sql."))

    result = await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert answer(result) == "Sorry, I only have sql."
    told = {m["tool_call_id"]: json.loads(m["content"])["error"] for m in fake.requests[1]["messages"][-2:]}
    assert told["ok1"].startswith("not run: another call in this turn was malformed")
    assert "no tool named 'nope'" in told["bad1"]


async def test_fallback_models_are_tried_in_order(fake: FakeChatCompletions) -> None:
    fake.enqueue(
        fake.error(500, "overloaded"), fake.error(404, "The model `second` does not exist", "model_not_found")
    )
    spec = remote(fake, fallback_models=["second", "third"])

    result = await adk_step(step([user("hello")], spec), TOOLS)

    assert answer(result) == "You said: hello"
    assert [r["model"] for r in fake.requests] == ["gpt-test", "second", "third"]
    assert result.metadata and result.metadata["model"] == "third"
    assert [m.split(" failed")[0] for m in result.metadata["failed_models"]] == [
        "model 'gpt-test'",
        "model 'second'",
    ]


async def test_when_every_model_fails_for_good_the_step_fails(fake: FakeChatCompletions) -> None:
    fake.enqueue(fake.error(401, "bad key", "invalid_api_key"), fake.error(400, "bad request"))

    result = await adk_step(step([user("hello")], remote(fake, fallback_models=["second"])), TOOLS)

    assert result.failure_details and result.failure_details.type == "AUTHENTICATION_FAILED"
    assert "'gpt-test'" in result.failure_details.message and "'second'" in result.failure_details.message


async def test_tools_are_not_declared_when_the_context_leaves_them_out(fake: FakeChatCompletions) -> None:
    spec = remote(fake, context={"include_tool_list": False})

    result = await adk_step(step([user("hello")], spec), TOOLS)

    assert answer(result) == "You said: hello"
    assert "tools" not in fake.requests[0]


async def test_a_plan_answer_and_a_task_json_answer(fake: FakeChatCompletions) -> None:
    fake.enqueue(fake.text("```json\n" + json.dumps(HELLO_PLAN) + "\n```"), fake.text('{"total": 3}'))

    plan = await adk_step(step([user("make a plan")], remote(fake)), TOOLS)
    task = await adk_step(step([], remote(fake), input_data={"question": "how many?"}), TOOLS)

    assert plan.output.intent == PlanBlueprint.model_validate(HELLO_PLAN)
    assert answer(task) == {"total": 3}
    assert fake.requests[1]["messages"][-1] == {
        "role": "user",
        "content": 'Task input (JSON):\n{"question": "how many?"}',
    }


async def test_agent_step_runs_demo_adk_and_declared_adk_agents(
    tmp_path: Any, fake: FakeChatCompletions, monkeypatch: pytest.MonkeyPatch
) -> None:
    acts = AgentActivities(Settings(data_dir=tmp_path))
    env = ActivityEnvironment()
    builtin = AgentStepInput(agent_id="Agent:demo-adk", owner_id="s", messages=[user("SELECT 1")])

    by_name = await env.run(acts.agent_step, builtin)
    declared = await env.run(acts.agent_step, step([user("hello")], remote(fake)))

    assert isinstance(by_name.output.intent, ToolCallRequest) and by_name.output.intent.tool_id == "sql"
    assert answer(declared) == "You said: hello"

    monkeypatch.delitem(agents.FRAMEWORKS, "adk")
    with pytest.raises(ApplicationError) as caught:
        await env.run(acts.agent_step, step([user("hello")], remote(fake)))
    assert caught.value.type == "UnknownAgent" and caught.value.non_retryable
    assert "framework 'adk'" in caught.value.message


async def test_empty_and_filtered_answers_are_failures(fake: FakeChatCompletions) -> None:
    filtered = Reply(message={"role": "assistant", "content": None}, finish_reason="content_filter")
    fake.enqueue(fake.text(""), filtered)

    empty = await adk_step(step([user("hi")], remote(fake)), TOOLS)
    refused = await adk_step(step([user("hi")], remote(fake)), TOOLS)

    assert empty.failure_details and empty.failure_details.type == "MODEL_ERROR"
    assert empty.failure_details.message == "model 'gpt-test' returned an empty answer"
    assert refused.failure_details and refused.failure_details.type == "LLM_REFUSAL"
    assert refused.failure_details.message == (
        "model 'gpt-test' stopped (SAFETY): the endpoint's content filter withheld the answer"
    )


async def test_a_gemini_model_needs_google_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    spec = AgentSpec(name="g", framework="adk", model="gemini-2.5-flash")

    result = await adk_step(step([user("hi")], spec), TOOLS)

    assert result.failure_details and result.failure_details.type == "AUTHENTICATION_FAILED"
    assert "GOOGLE_API_KEY is not set" in result.failure_details.message
