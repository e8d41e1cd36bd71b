"""`Agent:demo`: the offline, deterministic rule agent (the rules are listed below).

`decide` is a pure function: the same input always gives the same `AgentResult`, with no
network and no clock, so it is the default agent and the test fixture. The rules, applied to
the latest message of the conversation, or to `input_data` for graph tasks:

* the latest message is a tool result or a denial → a `FinalAnswer` that reports it;
* `!command` or `input_data.command` → a `terminal` tool call;
* `ask: question` or `input_data.ask` → an `ask_user` call (the person's answer comes back);
* `plan: {json}` or `input_data.plan` → a `PlanBlueprint`;
* `use: <tool> {json}` → a call of that tool (an MCP server's, say) with those arguments;
* a real SQL statement (sqlglot, strict) or `input_data.sql` → a `sql` tool call;
* `input_data.fail` → a `FAILURE` result (checked before every other input);
* `input_data.echo` → `FinalAnswer(echo)`;
* any other `input_data` → `FinalAnswer(input_data)`; other text → a short help answer.

(`input_data.sleep_seconds` is handled by the `agent_step` activity, before `decide` runs.)
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from contracts import (
    ASK_USER,
    AgentIntent,
    AgentResult,
    AgentStepInput,
    FailureDetails,
    FailureType,
    FinalAnswer,
    PlanBlueprint,
    ToolCallRequest,
    ToolDenial,
    UniversalMessage,
)

from ..tools.registry import ALWAYS_DECLARED, allows
from ..tools.sentences import describe_tool_message
from ..tools.sql.syntax import classify, is_sql_statement

_PLAN_PREFIX = "plan:"
_ASK_PREFIX = "ask:"
_USE_PREFIX = "use:"
_PLAN_EXAMPLE = (
    'plan: {"new_tasks": [{"task_id": "hello", "input_data": {"echo": "hi"}, "assignee_id": "Agent:demo"}]}'
)


def _quote(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _result(thought: str, intent: FinalAnswer | ToolCallRequest | PlanBlueprint, rule: str) -> AgentResult:
    return AgentResult(
        status="SUCCESS",
        output=AgentIntent(thought=thought, intent=intent),
        metadata={"rule": rule},
    )


def _answer(thought: str, content: Any, rule: str) -> AgentResult:
    return _result(thought, FinalAnswer(content=content), rule)


def _failure(thought: str, type_: FailureType, message: str) -> AgentResult:
    details = FailureDetails(type=type_, message=message)
    return AgentResult(
        status="FAILURE",
        output=AgentIntent(thought=thought, intent=FinalAnswer(content=message)),
        failure_details=details,
        metadata={"rule": "fail"},
    )


def _tool_call(tool_id: str, arguments: dict[str, Any], thought: str, tools: list[str]) -> AgentResult:
    if tools and not allows([*tools, *ALWAYS_DECLARED], tool_id):
        return _answer(
            f"I would need the {tool_id} tool, which this agent may not use.",
            f"I cannot use the {tool_id} tool here; the tools I may use are: {', '.join(tools)}.",
            "tool_not_allowed",
        )
    return _result(thought, ToolCallRequest(tool_id=tool_id, arguments=arguments), f"tool:{tool_id}")


def _validation_summary(err: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or '(plan)'}: {error['msg']}"
        for error in err.errors()[:3]
    ]
    more = f" (and {err.error_count() - 3} more)" if err.error_count() > 3 else ""
    return "; ".join(problems) + more


def _parse_plan(raw: Any) -> PlanBlueprint | str:
    """A `PlanBlueprint` from a JSON string or object, or the reason it is not one."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            return f"the plan is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    if not isinstance(raw, dict):
        return f"the plan must be a JSON object (a PlanBlueprint), not {type(raw).__name__}"
    try:
        plan = PlanBlueprint.model_validate(raw)
    except ValidationError as err:
        return f"the plan is not a valid PlanBlueprint: {_validation_summary(err)}"
    if not (plan.new_tasks or plan.update_tasks):
        return "the plan has no tasks: `new_tasks` is empty"
    return plan


def _use(rest: str, tools: list[str]) -> AgentResult:
    """`use: <tool> {json arguments}`: a call of any tool the agent may use (an MCP server's)."""
    tool_id, _, raw = rest.partition(" ")
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as err:
        arguments = err.msg
    if not tool_id or not isinstance(arguments, dict):
        return _answer(
            "The message asks for a tool call I cannot read.",
            'Write `use: <tool> {json arguments}`, e.g. `use: mcp__notes__add_note {"text": "hi"}`'
            + (f" (the arguments are not a JSON object: {arguments})" if isinstance(arguments, str) else ""),
            "invalid_use",
        )
    return _tool_call(tool_id, arguments, f"The message asks me to use the {tool_id} tool.", tools)


def _plan_result(plan: PlanBlueprint) -> AgentResult:
    names = ", ".join(task.task_id for task in plan.new_tasks) or "task updates"
    return _result(f"The request is a plan ({names}); I hand it to the graph engine.", plan, "plan")


def _decide_chat(text: str, tools: list[str]) -> AgentResult:
    stripped = text.strip()
    if stripped.startswith("!"):
        command = stripped[1:].strip()
        if not command:
            return _answer(
                "The message is a bare '!'.",
                "Nothing to run: put a command after `!`, e.g. `!ls`.",
                "empty_command",
            )
        return _tool_call(
            "terminal",
            {"command": command},
            f"The message starts with '!'; I need the terminal tool to run `{_quote(command)}`.",
            tools,
        )
    if stripped.lower().startswith(_ASK_PREFIX):
        question = stripped[len(_ASK_PREFIX) :].strip()
        if not question:
            return _answer(
                "The message is a bare 'ask:'.", "Put the question after `ask:`.", "empty_question"
            )
        return _tool_call(
            ASK_USER, {"question": question}, "The message asks me to ask you something; I ask.", tools
        )
    if stripped.lower().startswith(_USE_PREFIX):
        return _use(stripped[len(_USE_PREFIX) :].strip(), tools)
    if stripped.lower().startswith(_PLAN_PREFIX):
        plan = _parse_plan(stripped[len(_PLAN_PREFIX) :].strip())
        if isinstance(plan, str):
            return _answer(
                "The message asks for a plan, but the plan is not usable.",
                f"I could not use that plan: {plan}. Send `plan:` followed by a PlanBlueprint as "
                f"JSON, e.g. {_PLAN_EXAMPLE}",
                "invalid_plan",
            )
        return _plan_result(plan)
    if is_sql_statement(stripped):
        kind = classify(stripped).kind
        article = "an" if kind[:1] in "AEIOU" else "a"
        return _tool_call(
            "sql",
            {"sql": stripped},
            f"The message is {article} {kind} statement; I need the sql tool.",
            tools,
        )
    quoted = f'"{_quote(stripped)}"' if stripped else "an empty message"
    return _answer(
        "The message is neither SQL, a command nor a plan; I explain what I can do.",
        f"I am the offline demo agent and I did not understand {quoted}. I can run SQL on the demo "
        "`orders` table (e.g. `SELECT * FROM orders`), run a shell command written as `!command` "
        "(e.g. `!ls`), ask you something with `ask: question`, or start a task graph from `plan: {json}`.",
        "help",
    )


def _decide_task(data: dict[str, Any], tools: list[str]) -> AgentResult:
    fail = data.get("fail")
    if fail is not None and fail is not False:
        if isinstance(fail, dict):
            try:
                details = FailureDetails.model_validate(fail)
                return _failure("The task input asks me to fail.", details.type, details.message)
            except ValidationError:
                pass
        message = "the task input asked the demo agent to fail" if fail is True else str(fail)
        return _failure("The task input asks me to fail.", "TOOL_EXECUTION_FAILED", message)
    for key, tool_id in (("sql", "sql"), ("command", "terminal"), ("ask", ASK_USER)):
        if key in data:
            value = data[key]
            if not isinstance(value, str) or not value.strip():
                return _failure(
                    f"input_data.{key} is unusable.",
                    "VALIDATION_ERROR",
                    f"input_data.{key} must be a non-empty string, got {value!r}",
                )
            return _tool_call(
                tool_id,
                {"question" if tool_id == ASK_USER else key: value.strip()},
                f"The task gives input_data.{key}; I need the {tool_id} tool.",
                tools,
            )
    if "plan" in data:
        plan = _parse_plan(data["plan"])
        if isinstance(plan, str):
            return _failure("input_data.plan is unusable.", "VALIDATION_ERROR", f"input_data.plan: {plan}")
        return _plan_result(plan)
    if "echo" in data:
        return _answer("The task gives input_data.echo; I answer with it.", data["echo"], "echo")
    return _answer("The task has no instruction I know; I answer with its inputs.", data, "echo_inputs")


def _latest_user_text(messages: list[UniversalMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content if isinstance(message.content, str) else json.dumps(message.content)
    return ""


def decide(step: AgentStepInput) -> AgentResult:
    """Run the demo agent's rules on one step (pure and deterministic).

    Changing a rule changes what new agent steps return; recorded histories keep the results
    they recorded (activity results are replayed, not recomputed), so no workflow versioning is
    needed.

    Args:
        step: The conversation and/or task inputs.

    Returns:
        A tool call, a plan, or a final answer; `FAILURE` only when `input_data` says so or a
        task's `sql`/`command`/`plan` input is unusable.
    """
    latest = step.messages[-1] if step.messages else None
    if latest is not None and latest.role == "tool":
        denied = ToolDenial.of(latest.content) is not None
        tool_id = latest.name or "tool"
        thought = (
            f"The {tool_id} call was denied; I tell the user."
            if denied
            else f"The {tool_id} result came back; I report it."
        )
        return _answer(thought, describe_tool_message(latest), "tool_result")
    if step.input_data is not None:
        return _decide_task(step.input_data, step.tools)
    return _decide_chat(_latest_user_text(step.messages), step.tools)
