"""An agent asks the person a question (`ask_user`): answered over HTTP, declined, timed out, refused."""

from __future__ import annotations

import httpx
import pytest

from contracts import QuestionAsked, TaskChunkType, TurnAnswered

from ..support import asked, asked_content, collect_events, event_of, events
from .test_sessions import DEMO_AGENTS, decide, is_type, new_key


async def ask(http: httpx.AsyncClient, key: str, question: str, principal: str = "alice") -> tuple[str, int]:
    """Send `ask: question`; the interaction id of the question and its chunk's sequence id."""
    sent = await http.post(
        f"/sessions/{key}/messages", json={"content": f"ask: {question}", "principal": principal}
    )
    assert sent.status_code == 202, sent.text
    chunks = await collect_events(http, key, is_type(TaskChunkType.USER_INPUT_REQUEST))
    request = chunks[-1]
    assert asked_content(request)["question"] == question
    assert asked(request).interaction_type == "user_input" and isinstance(request.content, QuestionAsked)
    return asked(request).interaction_id, request.sequence_id


@pytest.mark.parametrize("agent_id", DEMO_AGENTS)
async def test_the_answer_goes_back_to_the_agent(http: httpx.AsyncClient, agent_id: str) -> None:
    key = new_key()
    assert (await http.post("/sessions", json={"session_key": key, "agent_id": agent_id})).status_code == 201
    interaction_id, offset = await ask(http, key, "Which table should I clean?")
    assert interaction_id.startswith("input_")
    status = (await http.get(f"/sessions/{key}")).json()
    assert [p["interaction_type"] for p in status["pending_interactions"]] == ["user_input"]
    assert status["status"] == "waiting_input", "a question is not an approval"

    answered = await decide(
        http, key, interaction_id, approved=True, principal="alice", response_data={"text": "orders"}
    )
    assert answered.status_code == 200, answered.text
    assert answered.json()["response_data"] == {"text": "orders"}
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert event_of(answer, TurnAnswered).answer == 'alice answered "Which table should I clean?": orders'
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit] == [("requested", "alice"), ("answered", "alice")]
    assert (await http.get(f"/sessions/{key}")).json()["status"] == "active"
    tool_message = [
        m for m in (await http.get(f"/sessions/{key}/messages")).json()["messages"] if m["role"] == "tool"
    ]
    assert tool_message[0]["content"]["content"] == {
        "question": "Which table should I clean?",
        "answer": "orders",
        "answered_by": "alice",
    }


async def test_a_question_needs_text_and_only_text(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, _ = await ask(http, key, "Your name?")
    for body, expected in (
        ({"approved": True}, "answer it with response_data.text"),
        ({"approved": True, "response_data": {"text": "  "}}, "response_data.text: the answer to a question"),
        ({"approved": True, "response_data": {"text": "x", "grant": "session"}}, "not with an answer"),
    ):
        refused = await decide(http, key, interaction_id, principal="alice", **body)
        assert refused.status_code == 422, refused.text
        assert expected in refused.json()["detail"]
    still = (await http.get(f"/sessions/{key}")).json()
    assert [p["interaction_id"] for p in still["pending_interactions"]] == [interaction_id], (
        "nothing was lost"
    )


async def test_a_declined_question_is_told_to_the_agent(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, offset = await ask(http, key, "Proceed?")
    declined = await decide(
        http, key, interaction_id, approved=False, principal="alice", user_message="no idea"
    )
    assert declined.status_code == 200, declined.text
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert (
        event_of(answer, TurnAnswered).answer
        == 'I did not run ask_user: denied by alice (the person declined to answer) — "no idea".'
    )
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"], e["comment"]) for e in audit] == [
        ("requested", "alice", "question: Proceed?"),
        ("declined", "alice", "no idea"),
    ]


async def test_an_unanswered_question_times_out(http: httpx.AsyncClient) -> None:
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "question_timeout_seconds": 1})
    assert created.status_code == 201, created.text
    _, offset = await ask(http, key, "Anyone there?")
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    [answer] = events(chunks, TurnAnswered)
    assert answer.answer == (
        "I did not run ask_user: denied by system:timeout (nobody answered the question in time) — "
        '"no decision within 0:00:01".'
    )
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [(e["kind"], e["principal"]) for e in audit] == [
        ("requested", "alice"),
        ("declined", "system:timeout"),
    ]


async def test_the_next_message_answers_a_question(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, offset = await ask(http, key, "Which region?")
    sent = await http.post(f"/sessions/{key}/messages", json={"content": "eu-west", "principal": "alice"})
    assert sent.status_code == 202
    chunks = await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": offset})
    [answer] = [c for c in chunks if c.chunk_type == TaskChunkType.RESPONSE]
    assert event_of(answer, TurnAnswered).answer == 'alice answered "Which region?": eu-west'
    users = [
        m for m in (await http.get(f"/sessions/{key}/messages")).json()["messages"] if m["role"] == "user"
    ]
    assert [m["content"] for m in users] == ["ask: Which region?"], "the reply answered the question"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert (audit[-1]["kind"], audit[-1]["interaction_id"]) == ("answered", interaction_id)
