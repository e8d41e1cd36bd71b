"""The API's Prometheus metrics: requests by route template and status, decisions by outcome and channel."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import assert_eventually

from .test_sessions import DELETE_CANCELLED, new_key


async def samples(http: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = await http.get("/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


async def test_an_approval_and_a_denial_are_counted_by_outcome_and_channel(http: httpx.AsyncClient) -> None:
    keys = [new_key(), new_key()]
    for approved, key in zip((True, False), keys, strict=True):
        await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
        session = await _waiting(http, key)
        interaction = session["pending_interactions"][0]["interaction_id"]
        decided = await http.post(
            f"/sessions/{key}/interactions/{interaction}", json={"approved": approved, "principal": "bob"}
        )
        assert decided.status_code == 200, decided.text

    found = await samples(http)

    assert found[("synapse_decisions_total", (("channel", "http"), ("outcome", "approved")))] == 1
    assert found[("synapse_decisions_total", (("channel", "http"), ("outcome", "denied")))] == 1
    route = "/sessions/{key}/interactions/{interaction_id}"
    assert (
        found[("synapse_http_requests_total", (("method", "POST"), ("route", route), ("status", "200")))] == 2
    )
    routes = {dict(labels)["route"] for name, labels in found if name == "synapse_http_requests_total"}
    assert not any(key in route for route in routes for key in keys), "labels are route templates, never keys"


async def test_unknown_paths_share_one_label(http: httpx.AsyncClient) -> None:
    for path in ("/nope", "/nope/again"):
        assert (await http.get(path)).status_code == 404

    found = await samples(http)

    assert (
        found[("synapse_http_requests_total", (("method", "GET"), ("route", "unmatched"), ("status", "404")))]
        == 2
    )


async def _waiting(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any]:
        answer = await http.get(f"/sessions/{key}")
        return answer.json() if answer.status_code == 200 else {}

    return await assert_eventually(
        probe, lambda s: bool(s.get("pending_interactions")), what="the approval pending"
    )
