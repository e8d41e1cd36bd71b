"""How `make bench`'s 'many' splits each side's sessions into rounds and orders the two sides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bench.many import batches_of, rotating


@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=1, max_value=50))
def test_batches_cover_every_session_once_in_even_consecutive_rounds(count: int, rounds: int) -> None:
    batches = batches_of(count, rounds)
    assert len(batches) == min(count, rounds)
    assert [i for batch in batches for i in batch] == list(range(count))
    sizes = [len(batch) for batch in batches]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_each_round_begins_with_the_next_side() -> None:
    first, second, third = object(), object(), object()
    assert rotating((first, second), 4) == [
        (first, second),
        (second, first),
        (first, second),
        (second, first),
    ]
    assert rotating((first, second), 1) == [(first, second)]
    three = rotating((first, second, third), 4)
    assert three == [
        (first, second, third),
        (second, third, first),
        (third, first, second),
        (first, second, third),
    ]
