"""What a model ended its step on, as the step's result: the calls it proposed, a plan
(`plan: {json}`), or the answer.

In a graph task (the step has `input_data`), JSON text is the answer's value, so the data flow
can reach into it; in a chat it stays text.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from contracts import (
    AgentIntent,
    AgentResult,
    AgentStepInput,
    FinalAnswer,
    PlanBlueprint,
    ToolCallBatch,
    ToolCallRequest,
)

from .conversation import PLAN_PREFIX


def as_plan(text: str) -> PlanBlueprint | None:
    """The plan `text` proposes (`plan: {json}` with tasks), or None."""
    stripped = text.strip()
    if not stripped.lower().startswith(PLAN_PREFIX):
        return None
    try:
        plan = PlanBlueprint.model_validate_json(stripped[len(PLAN_PREFIX) :].strip())
    except ValidationError:
        return None
    return plan if plan.new_tasks or plan.update_tasks else None


def answer_value(text: str, task: bool) -> Any:
    """The answer's content: in a graph task, JSON text is its value."""
    if task:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def final_result(step: AgentStepInput, text: str, thought: str) -> AgentResult:
    """The `SUCCESS` result of a step whose model ended on `text`."""
    plan = as_plan(text)
    intent = plan or FinalAnswer(content=answer_value(text.strip(), step.input_data is not None))
    thought = thought or ("I propose a plan." if plan else "I have the answer.")
    return AgentResult(status="SUCCESS", output=AgentIntent(thought=thought, intent=intent))


def calls_result(calls: list[ToolCallRequest], thought: str) -> AgentResult:
    """The `SUCCESS` result of a step whose model proposed `calls` (one, or a batch in its order)."""
    thought = thought or f"I need to run {', '.join(c.tool_id for c in calls)}."
    intent = calls[0] if len(calls) == 1 else ToolCallBatch(calls=calls)
    return AgentResult(status="SUCCESS", output=AgentIntent(thought=thought, intent=intent))
