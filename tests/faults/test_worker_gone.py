"""A session whose workers have all stopped: reads and commands answer 503 saying so, never 500.

Some seconds after the last worker of a task queue stops, Temporal answers a query or an update
on that queue "no poller seen for task queue recently" instead of letting it run out of time;
an update waits for a worker until its time (`api.calls.workflow.UPDATE_WAIT`) runs out.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest
from temporalio.client import Client

from api.calls import workflow
from core.settings import Settings
from worker import build_worker

from ..conftest import assert_eventually


@pytest.mark.slow(seconds=40)
async def test_a_session_whose_worker_is_gone_answers_503_and_says_why(
    client: Client, settings: Settings, api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workflow, "UPDATE_WAIT", timedelta(seconds=3))  # 20 s outside this test
    key = f"gone-{uuid.uuid4().hex[:8]}"
    async with build_worker(client, settings):
        sent = await api.post(f"/sessions/{key}/messages?wait=true", json={"content": "hello"})
        assert sent.status_code == 200, sent.text
    # Until Temporal notices, a read runs out of its 10 s ("did not answer within 10 s: no worker ...").
    status = await assert_eventually(
        lambda: api.get(f"/sessions/{key}"),
        lambda r: "could not answer" in r.text,
        within=90,
        what="Temporal seeing no worker",
    )
    assert status.status_code == 503, status.text
    assert "no worker is serving it" in status.json()["detail"]
    paused = await api.post(f"/sessions/{key}/pause", json={"reason": "lunch"})
    assert paused.status_code == 503, paused.text  # it waited UPDATE_WAIT, no longer
    assert "is `synapse worker` running on its task queue?" in paused.json()["detail"]
    assert "not confirmed" in paused.json()["detail"]
    assert paused.headers["retry-after"]

    async with build_worker(client, settings):  # a worker again: it applies the unconfirmed pause
        await assert_eventually(
            lambda: api.get(f"/sessions/{key}"),
            lambda r: r.status_code == 200 and r.json()["status"] == "paused",
            what="the pause applied by the new worker",
        )
        again = await api.post(f"/sessions/{key}/pause", json={"reason": "lunch"})
        assert again.status_code == 409, "as the 503 said: check before repeating it"
        resumed = await api.post(f"/sessions/{key}/resume", json={"reason": "back"})
        assert resumed.status_code == 200 and resumed.json()["status"] != "paused", resumed.text
