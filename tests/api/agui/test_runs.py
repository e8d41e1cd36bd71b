"""`POST /ag-ui`: AG-UI runs on a real app and worker, every frame read back with the
`ag-ui-protocol` models (`ag_ui.core.Event`), as a frontend's client would read it."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from ag_ui.core import Event, EventType, RunAgentInput, RunFinishedEvent
from pydantic import TypeAdapter
from temporalio.client import Client

from api.main import create_app
from core.settings import Settings

from ...support import serve
from ...workflows.graph.flows import gated
from ..test_critical_tools import critical_sql_worker
from ..test_session_graphs import BLUEPRINT, plan_message

KEYS = "k-view:vera:viewer,k-op:otto:operator,k-ok:ann:approver,k-ok2:ben:approver"
DELETE = "DELETE FROM orders WHERE status = 'cancelled'"
EVENTS: TypeAdapter[Event] = TypeAdapter(Event)
RUN_SECONDS = 60
"""Seconds a run that must end gets."""


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def keyed(settings: Settings) -> Settings:
    return settings.model_copy(update={"api": settings.api.model_copy(update={"keys": KEYS})})


@asynccontextmanager
async def app_with_keys(client: Client, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(create_app(keyed(settings), client=client)) as http:
        yield http


def run_input(thread: str, *said: str, resume: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A body as `@ag-ui/client` sends it: the whole conversation, a fresh run id."""
    body: dict[str, Any] = {
        "threadId": thread,
        "runId": uuid.uuid4().hex,
        "protocolVersion": "1.0",
        "state": {},
        "messages": [{"id": f"u{i}", "role": "user", "content": text} for i, text in enumerate(said)],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    if resume is not None:
        body["resume"] = resume
    RunAgentInput.model_validate(body)  # the package's own model reads it
    return body


async def run(
    http: httpx.AsyncClient, body: dict[str, Any], key: str = "k-ok", path: str = "/ag-ui"
) -> list[Any]:
    """The run's events, each frame parsed by the package's models; the run must end."""
    frames: list[Any] = []
    async with http.stream("POST", path, json=body, headers=bearer(key)) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        text = ""
        async for chunk in response.aiter_text():
            text += chunk
        for block in text.split("\n\n"):
            data = [line[len("data: ") :] for line in block.splitlines() if line.startswith("data: ")]
            if data:
                frames.append(EVENTS.validate_json("\n".join(data)))
    assert frames[0].type == EventType.RUN_STARTED and frames[0].protocol_version == "1.0"
    assert frames[-1].type in (EventType.RUN_FINISHED, EventType.RUN_ERROR), "every run ends"
    return frames


def of(frames: list[Any], kind: EventType) -> list[Any]:
    return [f for f in frames if f.type == kind]


def interrupts(frames: list[Any]) -> list[Any]:
    finished = frames[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.outcome is not None
    assert finished.outcome.type == "interrupt", finished
    return list(finished.outcome.interrupts)


def approving(interrupt_id: str) -> list[dict[str, Any]]:
    """A `resume` approving one interrupt."""
    return [{"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}]


async def waiting_delete(http: httpx.AsyncClient, key: str = "k-ok") -> tuple[str, Any]:
    """A new thread whose DELETE waits for approval: the thread id and its one interrupt."""
    thread = f"t-{uuid.uuid4().hex[:8]}"
    [interrupt] = interrupts(await run(http, run_input(thread, DELETE), key=key))
    return thread, interrupt


async def audited(http: httpx.AsyncClient, path: str, *kinds: str) -> list[tuple[str, str, str]]:
    """`(kind, principal, channel)` of the audit entries at `path` (`thread:<id>` for a thread's
    session) of these kinds (every kind but `requested` when none is named)."""
    if path.startswith("thread:"):
        path = f"/sessions/agui:{path.removeprefix('thread:')}/audit"
    entries = (await http.get(path, headers=bearer("k-view"))).json()["entries"]
    return [
        (e["kind"], e["principal"], e["channel"])
        for e in entries
        if (e["kind"] in kinds if kinds else e["kind"] != "requested")
    ]


async def test_a_delete_is_interrupted_and_a_resume_on_another_api_approves_it(
    client: Client, settings: Settings, worker: None, count_orders: Callable[[str], int]
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    before = count_orders("status = 'cancelled'")
    assert before > 0
    async with app_with_keys(client, settings) as first, app_with_keys(client, settings) as second:
        frames = await run(first, run_input(thread, DELETE), key="k-op")
        [start] = of(frames, EventType.TOOL_CALL_START)
        assert start.tool_call_name == "sql"
        assert json.loads(of(frames, EventType.TOOL_CALL_ARGS)[0].delta) == {"sql": DELETE}
        [interrupt] = interrupts(frames)
        assert (
            interrupt.reason == "tool_approval"
            and interrupt.tool_call_id == interrupt.id == start.tool_call_id
        )
        assert "DELETE" in (interrupt.message or "")
        assert interrupt.response_schema["required"] == ["approved"]
        assert count_orders("status = 'cancelled'") == before, "nothing ran yet"

        resume = approving(interrupt.id)
        frames = await run(second, run_input(thread, DELETE, resume=resume))
        [result] = of(frames, EventType.TOOL_CALL_RESULT)
        assert result.tool_call_id == interrupt.id and json.loads(result.content)["ok"] is True
        assert of(frames, EventType.TEXT_MESSAGE_CONTENT), "the agent's answer"
        assert frames[-1].type == EventType.RUN_FINISHED and frames[-1].outcome is None
        assert count_orders("status = 'cancelled'") == 0
        assert await audited(second, f"thread:{thread}", "approved") == [("approved", "ann", "ag-ui")]


async def test_a_cancelled_interrupt_is_a_denial_with_its_reason_and_an_edit_runs_edited(
    client: Client, settings: Settings, worker: None, count_orders: Callable[[str], int]
) -> None:
    async with app_with_keys(client, settings) as http:
        denied = f"t-{uuid.uuid4().hex[:8]}"
        [interrupt] = interrupts(await run(http, run_input(denied, DELETE)))
        resume = [{"interruptId": interrupt.id, "status": "cancelled", "metadata": {"reason": "not today"}}]
        frames = await run(http, run_input(denied, DELETE, resume=resume))
        [result] = of(frames, EventType.TOOL_CALL_RESULT)
        assert json.loads(result.content) == {"ok": False, "error": "denied by ann: not today"}
        assert count_orders("status = 'cancelled'") > 0

        edited = f"t-{uuid.uuid4().hex[:8]}"
        [interrupt] = interrupts(await run(http, run_input(edited, DELETE)))
        assert count_orders("id = 1") == 1
        payload = {"approved": True, "editedArgs": {"sql": "DELETE FROM orders WHERE id = 1"}}
        resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": payload}]
        frames = await run(http, run_input(edited, DELETE, resume=resume))
        assert frames[-1].type == EventType.RUN_FINISHED and frames[-1].outcome is None
        assert count_orders("id = 1") == 0 and count_orders("status = 'cancelled'") > 0, "the edit ran"


async def test_a_resume_with_a_new_message_answers_the_interrupt_then_runs_the_message_in_the_same_run(
    client: Client, settings: Settings, worker: None, count_orders: Callable[[str], int]
) -> None:
    async with app_with_keys(client, settings) as http:
        thread, interrupt = await waiting_delete(http)
        resume = approving(interrupt.id)
        frames = await run(http, run_input(thread, DELETE, "how many orders are left?", resume=resume))
        [result] = of(frames, EventType.TOOL_CALL_RESULT)
        assert result.tool_call_id == interrupt.id and json.loads(result.content)["ok"] is True
        answers = of(frames, EventType.TEXT_MESSAGE_START)
        assert len(answers) == 2, "the resumed turn's answer, then the new message's"
        assert frames[-1].type == EventType.RUN_FINISHED and frames[-1].outcome is None
        assert len(of(frames, EventType.RUN_FINISHED)) == 1, "one run"
        assert count_orders("status = 'cancelled'") == 0
        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-view"))).json()
        said = [(m["role"], m.get("id")) for m in state["messages"] if m["role"] in ("user", "assistant")]
        assert [who for who, _ in said][-2:] == ["user", "assistant"] and ("user", "u1") in said
        assert [i for i in said if i[0] == "user"] == [("user", "u0"), ("user", "u1")]
        assert state["interrupts"] == []


async def test_garbage_resumes_are_refused_naming_the_field_and_leave_the_session_waiting(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread, interrupt = await waiting_delete(http)
        cases = [
            (
                [{"interruptId": "nope", "status": "resolved", "payload": {"approved": True}}],
                "resume.0.interruptId",
            ),
            ([{"interruptId": interrupt.id, "status": "maybe"}], "resume.0.status"),
            (
                [{"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": "yes"}}],
                "resume.0.payload.approved",
            ),
            ([{"interruptId": interrupt.id, "status": "resolved", "payload": {"ok": 1}}], "resume.0.payload"),
            ([{"interruptId": interrupt.id, "status": "resolved", "payload": 3}], "resume.0.payload"),
        ]
        for resume, field in cases:
            body = run_input(thread, DELETE)
            body["resume"] = resume
            refused = await http.post("/ag-ui", json=body, headers=bearer("k-ok"))
            assert refused.status_code == 422, refused.text
            assert f"body.{field}" in refused.json()["detail"], (field, refused.json())
        viewer = await http.post(
            "/ag-ui",
            json=run_input(
                thread,
                DELETE,
                resume=approving(interrupt.id),
            ),
            headers=bearer("k-op"),
        )
        assert viewer.status_code == 403 and "otto has role operator" in viewer.json()["detail"]
        assert (
            await http.post("/ag-ui", json=run_input(thread, DELETE), headers=bearer("k-view"))
        ).status_code == 403
        bad_thread = await http.post("/ag-ui", json=run_input("a b", DELETE), headers=bearer("k-ok"))
        assert bad_thread.status_code == 422 and "body.threadId" in bad_thread.json()["detail"]
        image = {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}}
        bad_messages = [
            ({**run_input(thread, DELETE), "runId": "r" * 201}, "body.runId"),
            (run_input(thread, DELETE, ""), "body.messages.1.content"),
            (
                {**run_input(thread), "messages": [{"id": "u" * 201, "role": "user", "content": "hi"}]},
                "body.messages.0.id",
            ),
            (
                {**run_input(thread), "messages": [{"id": "u9", "role": "user", "content": [image]}]},
                "body.messages.0.content.0",
            ),
        ]
        for body, field in bad_messages:
            refused = await http.post("/ag-ui", json=body, headers=bearer("k-op"))
            assert refused.status_code == 422 and field in refused.json()["detail"], (field, refused.text)

        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-view"))).json()
        assert [i["id"] for i in state["interrupts"]] == [interrupt.id], "the session still waits"
        audit = (await http.get(f"/sessions/agui:{thread}/audit", headers=bearer("k-view"))).json()
        refusal = [e for e in audit["entries"] if e["principal"] == "otto"]
        assert refusal and refusal[0]["channel"] == "ag-ui", "the operator's attempt is recorded"
        assert not [e for e in audit["entries"] if e["kind"] in ("approved", "denied")]


async def test_an_interrupt_decided_elsewhere_is_reported_not_decided_again(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread, interrupt = await waiting_delete(http)
        decided = await http.post(
            f"/sessions/agui:{thread}/interactions/{interrupt.id}",
            json={"approved": False, "user_message": "no"},
            headers=bearer("k-ok2"),
        )
        assert decided.status_code == 200, decided.text
        resume = approving(interrupt.id)
        frames = await run(http, run_input(thread, DELETE, "hello", resume=resume))
        [custom] = [f for f in of(frames, EventType.CUSTOM) if f.name == "synapse.already_decided"]
        assert custom.value["decidedBy"] == "ben" and custom.value["approved"] is False
        assert custom.value["channel"] == "http"
        assert of(frames, EventType.MESSAGES_SNAPSHOT)
        assert of(frames, EventType.TEXT_MESSAGE_CONTENT), "nothing waits: the new message's turn follows"
        assert frames[-1].type == EventType.RUN_FINISHED and frames[-1].outcome is None
        assert await audited(http, f"thread:{thread}", "approved", "denied") == [("denied", "ben", "http")]


async def test_a_reconnect_gets_the_conversation_and_a_resent_message_denies_nothing(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        answered = await run(http, run_input(thread, "hello"))
        assert of(answered, EventType.TEXT_MESSAGE_CONTENT)
        [interrupt] = interrupts(await run(http, run_input(thread, "hello", DELETE)))
        again = await run(http, run_input(thread, "hello", DELETE))  # a client resending it all
        assert [i.id for i in interrupts(again)] == [interrupt.id], "still waiting: not read as a reply"
        reconnect = await run(http, {**run_input(thread), "messages": []})
        [snapshot] = of(reconnect, EventType.MESSAGES_SNAPSHOT)
        users = [m for m in snapshot.messages if m.role == "user"]
        assert [(m.id, m.content) for m in users] == [("u0", "hello"), ("u1", DELETE)], "the client's own ids"
        assert [i.id for i in interrupts(reconnect)] == [interrupt.id]
        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-view"))).json()
        assert [m["id"] for m in state["messages"] if m["role"] == "user"] == ["u0", "u1"]


async def test_a_question_is_an_interrupt_answered_by_a_resume(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        [interrupt] = interrupts(await run(http, run_input(thread, "ask: Which region?")))
        assert interrupt.reason == "question" and interrupt.tool_call_id is None
        assert interrupt.response_schema["required"] == ["answer"]
        resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": {"answer": "eu-west"}}]
        frames = await run(http, run_input(thread, "ask: Which region?", resume=resume))
        texts = "".join(f.delta for f in of(frames, EventType.TEXT_MESSAGE_CONTENT))
        assert "eu-west" in texts and frames[-1].type == EventType.RUN_FINISHED
        assert await audited(http, f"thread:{thread}", "answered") == [("answered", "ann", "ag-ui")]


async def test_a_thread_starts_with_the_agent_its_path_names(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        body = run_input(thread, "hello")
        async with http.stream(
            "POST", "/ag-ui/Agent:demo-adk", json=body, headers=bearer("k-op")
        ) as response:
            assert response.status_code == 200
            text = (await response.aread()).decode()
        assert '"type":"RUN_FINISHED"' in text
        session = (await http.get(f"/sessions/agui:{thread}", headers=bearer("k-view"))).json()
        assert (session["agent_id"], session["channel"]) == ("Agent:demo-adk", "ag-ui")
        unknown = await http.post(
            "/ag-ui/Agent:nobody", json=run_input("t-x", "hello"), headers=bearer("k-op")
        )
        assert unknown.status_code == 422 and "Agent:nobody" in unknown.json()["detail"]


async def test_a_graphs_gate_is_an_interrupt_and_the_resume_decides_it_in_the_graph(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        plan = plan_message(BLUEPRINT)
        [interrupt] = interrupts(await run(http, run_input(thread, plan), key="k-op"))
        assert interrupt.reason == "gate" and interrupt.tool_call_id is None
        assert "Publish the total?" in (interrupt.message or "")
        graph = interrupt.metadata["synapse"]["workflowId"]
        assert graph.startswith("graph:"), "the gate is the graph's"
        resume = approving(interrupt.id)
        frames = await run(http, run_input(thread, plan, resume=resume))
        [taken] = [f for f in of(frames, EventType.CUSTOM) if f.name == "synapse.decision_taken"]
        assert (taken.value["decided_by"], taken.value["channel"]) == ("ann", "ag-ui")
        answer = "".join(f.delta for f in of(frames, EventType.TEXT_MESSAGE_CONTENT))
        assert '"total": 42' in answer and frames[-1].type == EventType.RUN_FINISHED
        graph_audit = f"/graphs/{graph.removeprefix('graph:')}/audit"
        assert await audited(http, graph_audit, "approved") == [("approved", "ann", "ag-ui")]


async def test_a_resume_that_leaves_an_interrupt_out_ends_with_it_and_the_next_resume_goes_on(
    client: Client, settings: Settings, worker: None
) -> None:
    async with app_with_keys(client, settings) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        plan = plan_message({"new_tasks": [gated("one"), gated("two")]})
        first, second = interrupts(await run(http, run_input(thread, plan), key="k-op"))
        assert (first.reason, second.reason) == ("gate", "gate")
        async with asyncio.timeout(RUN_SECONDS):  # it used to wait for the other gate forever
            frames = await run(http, run_input(thread, plan, resume=approving(first.id)))
        [taken] = [f for f in of(frames, EventType.CUSTOM) if f.name == "synapse.decision_taken"]
        assert taken.value["interaction_id"] == first.id and taken.value["decided_by"] == "ann"
        assert [i.id for i in interrupts(frames)] == [second.id], "what the resume left out still waits"
        frames = await run(http, run_input(thread, plan, resume=approving(second.id)))
        assert frames[-1].type == EventType.RUN_FINISHED and frames[-1].outcome is None
        assert of(frames, EventType.TEXT_MESSAGE_CONTENT), "the graph's answer"


async def test_under_the_two_person_rule_a_first_approval_ends_the_run_with_the_same_interrupt(
    client: Client, settings: Settings, count_orders: Callable[[str], int]
) -> None:
    async with critical_sql_worker(client, settings), app_with_keys(client, settings) as http:
        thread, interrupt = await waiting_delete(http)
        resume = approving(interrupt.id)
        first = await run(http, run_input(thread, DELETE, "and then?", resume=resume), key="k-ok")
        [again] = interrupts(first)
        assert again.id == interrupt.id and again.metadata["synapse"]["approvedBy"] == ["ann"]
        assert count_orders("status = 'cancelled'") > 0, "one approval of two runs nothing"
        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-view"))).json()
        assert [m["id"] for m in state["messages"] if m["role"] == "user"] == ["u0"], (
            "a message while the request still waits is not delivered (it would deny it)"
        )
        twice = await http.post(
            "/ag-ui", json=run_input(thread, DELETE, resume=resume), headers=bearer("k-ok")
        )
        assert twice.status_code == 409 and "ann" in twice.json()["detail"]
        second = await run(http, run_input(thread, DELETE, "and then?", resume=resume), key="k-ok2")
        assert second[-1].type == EventType.RUN_FINISHED and second[-1].outcome is None
        assert count_orders("status = 'cancelled'") == 0
        assert len(of(second, EventType.TEXT_MESSAGE_START)) == 2, "the call's report, then the message's"
        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-view"))).json()
        assert [m["id"] for m in state["messages"] if m["role"] == "user"] == ["u0", "u1"]


async def test_a_thread_belongs_to_the_project_of_the_key_that_started_it(
    client: Client, settings: Settings, worker: None
) -> None:
    keys = "k-shop:sam:approver:projects=shop,k-bill:bea:approver:projects=billing"
    scoped = settings.model_copy(update={"api": settings.api.model_copy(update={"keys": keys})})
    async with serve(create_app(scoped, client=client)) as http:
        thread = f"t-{uuid.uuid4().hex[:8]}"
        [interrupt] = interrupts(await run(http, run_input(thread, DELETE), key="k-shop"))
        session = (await http.get(f"/sessions/agui:{thread}", headers=bearer("k-shop"))).json()
        assert session["project"] == "shop"
        assert (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-bill"))).status_code == 404
        resume = approving(interrupt.id)
        other = await http.post(
            "/ag-ui", json=run_input(thread, DELETE, resume=resume), headers=bearer("k-bill")
        )
        assert other.status_code == 404, "another project's thread is not there for its keys"
        state = (await http.get(f"/ag-ui/{thread}/state", headers=bearer("k-shop"))).json()
        assert [i["id"] for i in state["interrupts"]] == [interrupt.id]


async def test_no_body_or_key_decides_as_anyone_but_the_caller_with_an_approvers_role(
    client: Client, settings: Settings, worker: None, count_orders: Callable[[str], int]
) -> None:
    async with app_with_keys(client, settings) as http:
        thread, interrupt = await waiting_delete(http, key="k-op")
        approve = {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}
        attacks: list[tuple[str, str, dict[str, Any], int, str]] = [
            (
                "a viewer's new message",
                "k-view",
                run_input(thread, DELETE, "hello"),
                403,
                "vera has role viewer",
            ),
            (
                "a viewer's resume, its entry 500 times (recorded once)",
                "k-view",
                run_input(thread, DELETE, resume=[approve] * 500),
                403,
                "vera has role viewer",
            ),
            (
                "an operator's resume (with a message no session takes: the role is refused first)",
                "k-op",
                run_input(thread, DELETE, "", resume=[approve]),
                403,
                "otto has role operator",
            ),
            (
                "an approval naming someone else in its payload",
                "k-ok",
                run_input(
                    thread,
                    DELETE,
                    resume=[
                        {**approve, "payload": {"approved": True, "principal": "ben", "decided_by": "ben"}}
                    ],
                ),
                422,
                "resume.0.payload",
            ),
            (
                "an approver's resume of 101 entries",
                "k-ok",
                run_input(thread, DELETE, resume=[approve] * 101),
                422,
                "at most 100 entries",
            ),
        ]
        for what, key, body, code, said in attacks:
            refused = await http.post("/ag-ui", json=body, headers=bearer(key))
            assert (refused.status_code, said in refused.text) == (code, True), (what, refused.text)
        assert count_orders("status = 'cancelled'") > 0, "nothing ran"

        named = run_input(thread, DELETE, resume=[{**approve, "metadata": {"principal": "ben", "by": "ben"}}])
        named["forwardedProps"] = {"principal": "ben"}
        named["state"] = {"principal": "ben"}
        frames = await run(http, named, key="k-ok")
        [taken] = [f for f in of(frames, EventType.CUSTOM) if f.name == "synapse.decision_taken"]
        assert (taken.value["decided_by"], taken.value["channel"]) == ("ann", "ag-ui"), (
            "the key's, not the body's"
        )
        assert count_orders("status = 'cancelled'") == 0

        replayed = await run(http, run_input(thread, DELETE, resume=[approve]), key="k-ok2")
        [again] = [f for f in of(replayed, EventType.CUSTOM) if f.name == "synapse.already_decided"]
        assert again.value["decidedBy"] == "ann", (
            "a replayed resume is told who decided; nothing is decided twice"
        )
        assert await audited(http, f"thread:{thread}") == [
            ("rejected", "vera", "ag-ui"),
            ("rejected", "otto", "ag-ui"),
            ("approved", "ann", "ag-ui"),
        ], "each refused attempt recorded (the viewer's too), one approval: the key's principal's"
