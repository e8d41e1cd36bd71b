"""Rate limits: each caller gets its rate in bursts, then 429 with `Retry-After`; others go on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from temporalio.client import Client

from api.main import create_app
from api.rate_limits import TokenBuckets
from core.settings import ApiSettings, Settings

from ..support import serve


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("rate", "burst", "gaps", "allowed"),
    [
        (1.0, 3, [0, 0, 0, 0], [True, True, True, False]),  # a burst, then paced
        (1.0, 3, [0, 0, 0, 0, 1.0], [True, True, True, False, True]),  # a second refills one
        (2.0, 1, [0, 0.25, 0.25], [True, False, True]),  # half a second per token at 2/s
        (1.0, 2, [0, 0, 100, 0, 0], [True, True, True, True, False]),  # idle refills to the burst only
    ],
)
def test_a_bucket_allows_its_burst_then_its_rate(
    rate: float, burst: int, gaps: list[float], allowed: list[bool]
) -> None:
    clock = Clock()
    buckets = TokenBuckets(rate, burst, clock)
    seen = []
    for gap in gaps:
        clock.now += gap
        seen.append(buckets.take("alice") == 0)
    assert seen == allowed


@settings(max_examples=200, deadline=None)
@given(
    rate=st.floats(min_value=0.5, max_value=50),
    burst=st.integers(min_value=1, max_value=20),
    requests=st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.floats(min_value=0, max_value=2)), max_size=60
    ),
)
def test_no_caller_ever_gets_more_than_its_burst_plus_its_rate(
    rate: float, burst: int, requests: list[tuple[str, float]]
) -> None:
    """Against the reference: in any window of t seconds a caller gets at most burst + rate * t,
    and a refusal's wait is exactly when its next token is due."""
    clock = Clock()
    buckets = TokenBuckets(rate, burst, clock)
    granted: dict[str, list[float]] = {"a": [], "b": []}
    for caller, gap in requests:
        clock.now += gap
        wait = buckets.take(caller)
        if wait == 0:
            granted[caller].append(clock.now)
        else:
            assert 0 < wait <= 1 / rate + 1e-9
    for times in granted.values():
        for i, start in enumerate(times):
            for j in range(i, len(times)):
                assert j - i + 1 <= burst + rate * (times[j] - start) + 1e-6


async def test_a_caller_past_its_rate_gets_429_and_others_still_get_in(
    client: Client, settings: Settings
) -> None:
    limited = settings.model_copy(
        update={"api": ApiSettings(rate_limit=0.01, rate_burst=3, keys="k-a:ann:viewer,k-b:bob:viewer")}
    )
    app = create_app(limited, client=client)
    async with serve(app) as http:
        ann = {"Authorization": "Bearer k-a"}
        assert [(await http.get("/me", headers=ann)).status_code for _ in range(3)] == [200, 200, 200]
        refused = await http.get("/me", headers=ann)
        assert refused.status_code == 429
        assert 90 < int(refused.headers["Retry-After"]) <= 100, "a token is due 100 s after the burst began"
        assert "at most 0.01 a second in bursts of 3" in refused.json()["detail"]
        assert (await http.get("/me", headers={"Authorization": "Bearer k-b"})).status_code == 200
        anonymous = [(await http.get("/healthz")).status_code for _ in range(4)]
        assert anonymous == [200, 200, 200, 429], "without a key, the address is the caller"
        document = (await http.get("/openapi.json", headers={"Authorization": "Bearer k-b"})).json()
        assert "429" in document["paths"]["/sessions/{key}/messages"]["post"]["responses"]
        metrics = (await http.get("/metrics", headers={"Authorization": "Bearer k-b"})).text
        assert 'status="429"' in metrics, "refusals are counted"


async def test_without_a_limit_nothing_is_refused(client: Client, settings: Settings) -> None:
    app = create_app(settings, client=client)
    async with serve(app) as http:
        assert {(await http.get("/healthz")).status_code for _ in range(150)} == {200}
        document = (await http.get("/openapi.json")).json()
        assert "429" not in document["paths"]["/sessions/{key}/messages"]["post"]["responses"]
