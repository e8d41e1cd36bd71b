"""A session turn that ends in the agent's answer is recorded in the experience index by the step
that answers (`experience-in-last-step`), not by an `index_experience` local activity after it;
a turn that ends otherwise (a failure) is still recorded by the workflow."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import ActivityEnvironment

from activities.agents.step import AgentActivities
from contracts import (
    AgentStepInput,
    ExperienceMatch,
    ExperienceRecord,
    SessionConfig,
    TurnToRemember,
    UniversalMessage,
)
from core.experience import open_index
from core.settings import Settings
from tests.conftest import assert_eventually
from workflows.session import SessionWorkflow

from ...decisions import decided
from .demo_sessions import demo_session, send, summary

IDLE_SECONDS = SessionConfig.model_fields["idle_timeout_seconds"].default


def _remember_markers(events: list[HistoryEvent]) -> list[str]:
    """The summaries of the workflow's own `index_experience` local activities ("remember turn N")."""
    return [
        summary(e)
        for e in events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and "remember" in summary(e)
    ]


async def _turns_over(handle: WorkflowHandle[Any, Any], turns: int) -> list[HistoryEvent]:
    """The history once `turns` turns are over (each ends by starting the session's idle timer)."""

    def idle_timers(events: list[HistoryEvent]) -> int:
        return sum(
            1
            for e in events
            if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
            and e.timer_started_event_attributes.start_to_fire_timeout.seconds == IDLE_SECONDS
        )

    async def history() -> list[HistoryEvent]:
        return list((await handle.fetch_history()).events)

    return await assert_eventually(history, lambda e: idle_timers(e) >= turns, what=f"{turns} turns over")


async def _records(settings: Settings, owner_id: str, word: str) -> list[ExperienceMatch]:
    """The owner's records that mention `word`, by turn."""
    index = open_index(settings.experience_url, settings.data_dir)
    found = await asyncio.to_thread(index.search, word, 20)
    return sorted((m for m in found if m.owner_id == owner_id), key=lambda m: m.turn)


async def test_turns_answered_by_the_agent_are_recorded_by_the_answering_step(
    client: Client, settings: Settings, worker: None
) -> None:
    config, handle = demo_session(client, "remember")
    word = f"zanzibar{uuid.uuid4().hex[:6]}"

    await send(client, settings, config, f"hello {word}")  # answered by the first, quick, step
    await _turns_over(handle, 1)
    statement = f"DELETE FROM orders WHERE status = '{word}'"
    await send(client, settings, config, statement)  # answered by the step after the approval
    pending = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_pending), bool, what="the DELETE waiting for approval"
    )
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=pending[0].interaction_id, approved=True, principal="bob"),
    )
    events = await _turns_over(handle, 2)

    assert _remember_markers(events) == [], "no index_experience local activity after an answer"
    status = await handle.query(SessionWorkflow.get_status)
    answers = [m.content for m in status.messages if m.role == "assistant" and isinstance(m.content, str)]
    records = await _records(settings, handle.id, word)  # recorded before each turn ended
    assert [(r.turn, r.asked_by, r.outcome, r.agent_id) for r in records] == [
        (1, "alice", "answer", "Agent:demo"),
        (2, "alice", "answer", "Agent:demo"),
    ]
    assert [r.question for r in records] == [f"hello {word}", statement]
    assert [r.answer for r in records] == [answers[0], answers[-1]], "each record keeps the answer given"


async def test_a_turn_that_ends_in_a_failure_is_recorded_by_the_workflow(
    client: Client, settings: Settings, worker: None
) -> None:
    config, handle = demo_session(
        client, "remember-fail", agent=None, agent_id="Agent:nobody"
    )  # the step fails
    word = f"quokka{uuid.uuid4().hex[:6]}"
    await send(client, settings, config, f"hello {word}")
    events = await _turns_over(handle, 1)
    assert _remember_markers(events) == ['"remember turn 1"'], "the workflow recorded the failed turn"
    [record] = await _records(settings, handle.id, word)
    assert (record.turn, record.outcome) == (1, "failure")


@pytest.fixture
def agents(settings: Settings) -> AgentActivities:
    return AgentActivities(settings)


def _step(owner_id: str, text: str, turn: int = 3) -> AgentStepInput:
    return AgentStepInput(
        agent_id="Agent:demo",
        owner_id=owner_id,
        messages=[UniversalMessage(role="user", content=text, name="carol")],
        remember=TurnToRemember(turn=turn, asked_by="carol", question=text),
    )


async def test_a_step_records_its_answer_once_however_often_it_is_retried(
    agents: AgentActivities, settings: Settings
) -> None:
    owner, word = f"session:{uuid.uuid4().hex[:8]}", f"wombat{uuid.uuid4().hex[:6]}"
    env = ActivityEnvironment()
    first = await env.run(agents.agent_step, _step(owner, f"hello {word}"))
    again = await env.run(agents.agent_step, _step(owner, f"hello {word}"))
    assert first.remembered and again.remembered
    [record] = await _records(settings, owner, word)
    assert (record.turn, record.asked_by, record.question) == (3, "carol", f"hello {word}")
    assert record.answer == first.output.intent.content  # type: ignore[union-attr]


async def test_a_step_that_is_not_an_answer_or_not_asked_to_remember_records_nothing(
    agents: AgentActivities, settings: Settings
) -> None:
    owner, word = f"session:{uuid.uuid4().hex[:8]}", f"numbat{uuid.uuid4().hex[:6]}"
    env = ActivityEnvironment()
    call = await env.run(agents.agent_step, _step(owner, f"DELETE FROM orders WHERE status = '{word}'"))
    assert call.output.intent.__class__.__name__ == "ToolCallRequest" and not call.remembered
    unasked = _step(owner, f"hello {word}").model_copy(update={"remember": None})
    answer = await env.run(agents.agent_step, unasked)
    assert answer.output.intent.__class__.__name__ == "FinalAnswer" and not answer.remembered
    assert await _records(settings, owner, word) == []


async def test_a_step_whose_index_fails_still_answers_and_leaves_the_record_to_the_workflow(
    agents: AgentActivities, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(record: ExperienceRecord) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(agents.context.index, "record", broken)
    owner, word = f"session:{uuid.uuid4().hex[:8]}", f"dingo{uuid.uuid4().hex[:6]}"
    result = await ActivityEnvironment().run(agents.agent_step, _step(owner, f"hello {word}"))
    assert result.status == "SUCCESS" and result.output.intent.__class__.__name__ == "FinalAnswer"
    assert not result.remembered, "the workflow records the turn instead"
    assert await _records(settings, owner, word) == []
