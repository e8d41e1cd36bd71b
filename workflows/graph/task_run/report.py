"""What a task run tells: its graph (`report_of`: completed, failed or cancelled, with the answer
or the plan) and the experience index (`experience_of`: a completed run, for recall)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import AgentTaskInput, ExperienceRecord, TaskReport
    from contracts.experience import preview

from ...agent.host import LoopOutcome


def report_of(input: AgentTaskInput, outcome: LoopOutcome, max_turns: int) -> TaskReport:
    """What the graph hears of an agent loop's outcome."""
    base: dict[str, Any] = {
        "task_uuid": input.task_uuid,
        "version": input.version,
        "instance": input.instance,
    }
    if outcome.kind == "answer":
        return TaskReport(
            **base,
            status="completed",
            output=outcome.answer,
            artifact=outcome.artifact,
            agent_id=input.agent_id,
        )
    if outcome.kind == "plan" and outcome.plan is not None:
        planned = [task.task_id for task in outcome.plan.new_tasks]
        return TaskReport(
            **base, status="completed", output={"plan": planned}, plan=outcome.plan, agent_id=input.agent_id
        )
    if outcome.kind == "cancelled":
        return TaskReport(**base, status="cancelled", error="cancelled")
    if outcome.kind == "failure" and outcome.failure is not None:
        return TaskReport(**base, status="failed", error=f"{outcome.failure.type}: {outcome.failure.message}")
    return TaskReport(
        **base, status="failed", error=f"the agent did not answer within max_turns={max_turns} steps"
    )


def _text(value: Any) -> str:
    """A value as recall shows it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def experience_of(input: AgentTaskInput, report: TaskReport, owner_id: str, at: datetime) -> ExperienceRecord:
    """What the experience index keeps of a completed task run.

    The question is the task (its blueprint id and inputs), the answer its output (a preview when
    it was large); the run's workflow id names the graph, task and version it came from, and the
    graph is who asked (a task has no person asking; the graph's requester is not in its input).
    """
    return ExperienceRecord(
        owner_id=owner_id,
        turn=0,
        agent_id=report.agent_id or input.agent_id,
        asked_by=input.graph_workflow_id,
        at=at,
        outcome="plan" if report.plan is not None else "answer",
        question=preview(f"task {input.task_id!r}: {_text(input.input_data)}"),
        answer=preview(_text(report.output)),
    )
