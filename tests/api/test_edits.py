"""Approve with edits: the edited call runs (re-assessed), the audit keeps both, the agent is told."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from contracts import TaskChunkType, ToolCalled, TurnAnswered

from ..support import asked, asked_content, collect_events, events
from .test_sessions import DELETE_CANCELLED, ask_for_delete, decide, is_type, new_key

ONLY_ID_1 = "DELETE FROM orders WHERE id = 1"


async def test_an_edited_delete_runs_as_edited_and_the_agent_is_told(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    before = count_orders("1=1")
    response = await decide(
        http,
        key,
        asked(request).interaction_id,
        approved=True,
        principal="bob",
        response_data={"arguments": {"sql": ONLY_ID_1}},
    )
    assert response.status_code == 200, response.text
    assert response.json()["tool_result"]["content"]["rowcount"] == 1
    assert (count_orders("1=1"), count_orders("id = 1"), count_orders("status = 'cancelled'")) == (
        before - 1,
        0,
        3,
    ), "only the edit ran: order 1 is gone, the cancelled ones are all there"
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.COMPLETE), params={"after": request.sequence_id}
    )
    ran = events(chunks, ToolCalled)[0]
    assert ran.tool_params == {"sql": ONLY_ID_1}
    [answer] = events(chunks, TurnAnswered)
    assert answer.answer == (
        "bob edited my sql call before it ran "
        '(I proposed {"sql": "DELETE FROM orders WHERE status = \'cancelled\'"}). DELETE done: 1 row affected.'
    ), "the agent hears what it proposed and what ran"
    audit = (await http.get(f"/sessions/{key}/audit")).json()["entries"]
    assert [e["kind"] for e in audit] == ["requested", "approved", "edited"]
    assert audit[2]["comment"] == f'proposed {{"sql": "{DELETE_CANCELLED}"}}; runs {{"sql": "{ONLY_ID_1}"}}'


async def test_an_edit_into_a_stronger_statement_is_asked_for_again(
    http: httpx.AsyncClient, count_orders: Callable[[str], int]
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    first = asked(request).interaction_id
    edit = {"arguments": {"sql": "DROP TABLE orders"}}
    response = await decide(http, key, first, approved=True, principal="bob", response_data=edit)
    assert response.status_code == 200, response.text
    assert "asked for again" in response.json()["tool_result"]["error"], "the approver is told"
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), params={"after": request.sequence_id}
    )
    again = chunks[-1]
    assert asked(again).interaction_id != first
    assert asked_content(again)["tool_params"] == {"sql": "DROP TABLE orders"}
    assert (
        asked_content(again)["edit_of"] == first and "bob edited the call" in asked_content(again)["reason"]
    )
    assert count_orders("1=1") > 0, "nothing ran yet"
    denied = await decide(http, key, asked(again).interaction_id, approved=False, principal="carol")
    assert denied.status_code == 200, denied.text
    await collect_events(http, key, is_type(TaskChunkType.COMPLETE), params={"after": again.sequence_id})
    assert count_orders("1=1") > 0, "the table is still there"


async def test_bad_edits_are_422_and_lose_nothing(http: httpx.AsyncClient) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    interaction_id = asked(request).interaction_id
    for body, expected in (
        ({"approved": True, "response_data": {"arguments": "DROP TABLE orders"}}, "must be an object"),
        (
            {"approved": False, "response_data": {"arguments": {"sql": ONLY_ID_1}}},
            "only goes with approved=true",
        ),
        ({"approved": True, "response_data": {"text": "hi"}}, "is a tool approval: approve or deny it"),
    ):
        refused = await decide(http, key, interaction_id, principal="bob", **body)
        assert refused.status_code == 422, refused.text
        assert expected in refused.json()["detail"]
    still = (await http.get(f"/sessions/{key}")).json()
    assert [p["interaction_id"] for p in still["pending_interactions"]] == [interaction_id]
