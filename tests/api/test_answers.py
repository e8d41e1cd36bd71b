"""Answering an agent's question needs no `approved`; deciding a tool call or a gate still does."""

from __future__ import annotations

import httpx

from tests.support import asked

from ..conftest import assert_eventually
from ..workflows.graph.flows import gated, task
from .test_graphs import status_of, submit, wait_graph
from .test_questions import ask
from .test_sessions import ask_for_delete, decide, new_key


async def test_a_question_is_answered_with_its_text_alone(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, _ = await ask(http, key, "Which table should I clean?")

    answered = await decide(http, key, interaction_id, principal="alice", response_data={"text": "orders"})

    assert answered.status_code == 200, answered.text
    outcome = answered.json()
    assert (outcome["approved"], outcome["decided_by"]) == (True, "alice")
    assert outcome["response_data"] == {"text": "orders"}
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["kind"] for e in audit] == ["requested", "answered"]

    again = await decide(http, key, interaction_id, principal="bob", response_data={"text": "users"})
    assert again.status_code == 409 and "already approved by alice" in again.json()["detail"]
    unknown = await decide(http, key, "input_99", principal="bob", response_data={"text": "users"})
    assert unknown.status_code == 404, unknown.text


async def test_a_question_answered_without_text_says_what_is_missing(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, _ = await ask(http, key, "Your name?")

    empty = await decide(http, key, interaction_id, principal="alice")

    assert empty.status_code == 422 and "answer it with response_data.text" in empty.json()["detail"]
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"]
    assert [p["interaction_id"] for p in pending] == [interaction_id]


async def test_a_tool_approval_without_approved_is_refused_naming_the_field(http: httpx.AsyncClient) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id

    for body in ({"principal": "bob"}, {"principal": "bob", "response_data": {"grant": "session"}}):
        refused = await decide(http, key, interaction_id, **body)
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert (
            detail.startswith("body.approved: required to decide tool approval") and interaction_id in detail
        )
        assert refused.json()["errors"] == [
            {"loc": ["body", "approved"], "msg": detail.removeprefix("body.approved: "), "type": "missing"}
        ]
    session = (await http.get(f"/sessions/{key}")).json()
    assert session["status"] == "waiting_approval", "nothing was decided"
    assert [p["interaction_id"] for p in session["pending_interactions"]] == [interaction_id]


async def test_on_a_graph_a_task_question_is_answered_and_a_gate_still_needs_approved(
    http: httpx.AsyncClient,
) -> None:
    created = await submit(
        http, {"new_tasks": [gated("deploy"), task("ask", input_data={"ask": "Which region?"})]}
    )
    gid = created["graph_id"]
    view = await wait_graph(http, gid, lambda v: len(v.pending_interactions) == 2, "a gate and a question")
    kinds = {r.interaction_type.value: r.interaction_id for r in view.pending_interactions}

    gate = await http.post(f"/graphs/{gid}/interactions/{kinds['confirmation']}", json={"principal": "bob"})
    assert gate.status_code == 422 and "required to decide confirmation" in gate.json()["detail"], gate.text
    answered = await http.post(
        f"/graphs/{gid}/interactions/{kinds['user_input']}",
        json={"principal": "bob", "response_data": {"text": "eu-west"}},
    )
    assert answered.status_code == 200 and answered.json()["approved"] is True, answered.text

    done = await wait_graph(http, gid, lambda v: status_of(v)["ask"] == "completed", "the question answered")
    assert "eu-west" in str({t.task_id: t.output for t in done.tasks}["ask"])
    confirmed = await http.post(
        f"/graphs/{gid}/interactions/{kinds['confirmation']}", json={"approved": True, "principal": "bob"}
    )
    assert confirmed.status_code == 200, confirmed.text
    await assert_eventually(
        lambda: http.get(f"/graphs/{gid}"), lambda r: r.json()["status"] == "completed", what="graph done"
    )
