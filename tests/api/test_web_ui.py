"""What an operator sees in the Temporal Web UI: details, search attributes, summaries."""

from __future__ import annotations

import json

import httpx
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client
from temporalio.converter import decode_typed_search_attributes

from tests.support import asked
from workflows.identity import search_attributes
from workflows.identity.ids import session_workflow_id

from ..conftest import assert_eventually
from .test_sessions import DELETE_CANCELLED, ask_for_delete, decide, new_key


async def test_the_web_ui_shows_the_pending_approval_and_filters_by_status(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = new_key()
    assert (
        await http.post("/sessions", json={"session_key": key, "approvers": ["carol", "dan"]})
    ).status_code == 201
    request = await ask_for_delete(http, key)
    handle = client.get_workflow_handle(session_workflow_id(key))

    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    details = metadata.current_details
    assert f"Waiting for approval** `{asked(request).interaction_id}`" in details
    assert "tool: `sql`" in details and DELETE_CANCELLED in details
    assert "may approve: carol, dan" in details
    assert "times out:" in details and "system:timeout" in details

    query = f'WorkflowId = "{session_workflow_id(key)}" AND SynapseStatus = "waiting_approval"'
    found = await assert_eventually(
        lambda: _ids(client, query), lambda ids: bool(ids), what="the session in a status-filtered list"
    )
    assert found == [session_workflow_id(key)]
    description = await handle.describe()
    attributes = description.typed_search_attributes
    assert attributes.get(search_attributes.CHANNEL) == "http"
    assert attributes.get(search_attributes.ASSIGNEE) == "Agent:demo"
    summary = await description.static_summary()
    assert summary == f"Session {key} with Agent:demo (http)"

    await decide(http, key, asked(request).interaction_id, approved=True, principal="carol")
    await assert_eventually(
        handle.describe,
        lambda d: (
            d.typed_search_attributes.get(search_attributes.STATUS) == "running"
            and d.typed_search_attributes.get(search_attributes.PENDING) == 0
        ),
        what="status back to running",
    )
    history = await handle.fetch_history()
    summaries = [
        json.loads(event.user_metadata.summary.data)
        for event in history.events
        if event.user_metadata.HasField("summary")
        # regular activities are scheduled; local activities (quick tools) are markers
        and (
            event.HasField("activity_task_scheduled_event_attributes")
            or event.HasField("marker_recorded_event_attributes")
        )
    ]
    assert f"tool sql: {DELETE_CANCELLED}" in summaries
    assert "agent Agent:demo" in summaries


async def _ids(client: Client, query: str) -> list[str]:
    return [execution.id async for execution in client.list_workflows(query)]


async def test_a_new_session_is_searchable_from_its_start_and_upserts_only_what_changes(
    http: httpx.AsyncClient, client: Client
) -> None:
    key = new_key()
    request = await ask_for_delete(http, key)
    await decide(http, key, asked(request).interaction_id, approved=True, principal="carol")
    handle = client.get_workflow_handle(session_workflow_id(key))

    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes.search_attributes
    shown = decode_typed_search_attributes(started)
    assert (shown.get(search_attributes.STATUS), shown.get(search_attributes.PENDING)) == ("running", 0)
    assert (shown.get(search_attributes.CHANNEL), shown.get(search_attributes.ASSIGNEE)) == (
        "http",
        "Agent:demo",
    )
    upserts = [
        {key.name: value for key, value in decode_typed_search_attributes(attributes.search_attributes)}
        for event in history.events
        if (
            attributes := event.upsert_workflow_search_attributes_event_attributes
        ).search_attributes.indexed_fields
    ]
    synapse = [fields for fields in upserts if "TemporalChangeVersion" not in fields]
    assert synapse == [
        {"SynapseStatus": "waiting_approval", "SynapsePending": 1},
        {"SynapseStatus": "running", "SynapsePending": 0},
    ], "one upsert per change, holding only what changed"
