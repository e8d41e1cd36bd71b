"""How `make bench`'s 'many' splits each side's sessions into rounds and orders the two sides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bench.many import alternating, batches_of


@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=1, max_value=50))
def test_batches_cover_every_session_once_in_even_consecutive_rounds(count: int, rounds: int) -> None:
    batches = batches_of(count, rounds)
    assert len(batches) == min(count, rounds)
    assert [i for batch in batches for i in batch] == list(range(count))
    sizes = [len(batch) for batch in batches]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_the_sides_take_turns_going_first() -> None:
    first, second, third = object(), object(), object()
    orders = alternating((first, second), 4)
    assert orders == [(first, second), (second, first), (first, second), (second, first)]
    assert alternating((first, second), 1) == [(first, second)]
    three = alternating((first, second, third), 3)
    assert three == [(first, second, third), (third, second, first), (first, second, third)]
