"""The durable "already taken" marks of chat events: once per event, across instances and threads."""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from api.chat.seen import SeenEvents


def test_an_event_is_taken_once_also_by_a_restarted_or_second_process(tmp_path: Path) -> None:
    first = SeenEvents(tmp_path)
    assert first.claim_now("dingtalk", "msg:1") is True
    assert first.claim_now("dingtalk", "msg:1") is False
    assert SeenEvents(tmp_path).claim_now("dingtalk", "msg:1") is False, "a new instance on the same data dir"
    assert SeenEvents(tmp_path).claim_now("lark", "msg:1") is True, "channels are apart"


def test_of_many_threads_claiming_one_event_exactly_one_takes_it(tmp_path: Path) -> None:
    stores = [SeenEvents(tmp_path) for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        taken = list(pool.map(lambda store: store.claim_now("dingtalk", "click:frame-1"), stores))

    assert taken.count(True) == 1


events = st.lists(
    st.tuples(st.sampled_from(["dingtalk", "lark"]), st.text(min_size=1, max_size=8)), max_size=30
)


@settings(max_examples=40, deadline=None)
@given(events)
def test_a_claim_succeeds_exactly_for_the_first_sight_of_an_event(sequence: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SeenEvents(Path(folder))
        seen: set[tuple[str, str]] = set()
        for channel, event_id in sequence:
            assert store.claim_now(channel, event_id) is ((channel, event_id) not in seen)
            seen.add((channel, event_id))
