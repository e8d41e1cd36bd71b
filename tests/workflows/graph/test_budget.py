"""The payload budget against a reference model: commands go in order, as many per workflow task
as fit (in bytes, and in number), and one larger than the budget goes alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workflows.graph.budget import InFlight


def reference(sizes: list[int], limit: int, commands: int) -> list[list[int]]:
    """Consecutive groups, each within `limit` bytes and `commands` commands (or a single command)."""
    groups: list[list[int]] = []
    for size in sizes:
        if groups and sum(groups[-1]) + size <= limit and len(groups[-1]) < commands:
            groups[-1].append(size)
        else:
            groups.append([size])
    return groups


def tasks_of(sizes: list[int], limit: int, commands: int) -> list[list[int]]:
    """What each workflow task issues when every command waits on `InFlight` and the server
    confirms a task's commands before the next task runs."""
    budget, waiting, tasks = InFlight(limit, commands), list(sizes), []
    while waiting:
        issued = []
        while waiting and budget.fits(waiting[0]):
            budget.take(waiting[0])
            issued.append(waiting.pop(0))
        tasks.append(issued)
        for size in issued:
            budget.give_back(size)
    return tasks


@given(
    st.lists(st.integers(min_value=1, max_value=3000), max_size=60),
    st.integers(min_value=1, max_value=5000),
    st.integers(min_value=1, max_value=30),
)
def test_each_workflow_task_carries_what_the_reference_model_groups(
    sizes: list[int], limit: int, commands: int
) -> None:
    tasks = tasks_of(sizes, limit, commands)
    assert tasks == reference(sizes, limit, commands)
    assert [size for task in tasks for size in task] == sizes, "every command, in order"
    assert all((sum(task) <= limit and len(task) <= commands) or len(task) == 1 for task in tasks)


def test_a_command_waits_while_others_are_in_flight_and_goes_alone_when_too_large() -> None:
    budget = InFlight(100)
    assert budget.fits(500), "alone, anything goes"
    budget.take(60)
    assert budget.fits(40) and not budget.fits(41)
    budget.give_back(60)
    assert budget.carried == 0 and budget.fits(500)


def test_small_commands_wait_once_as_many_as_allowed_are_in_flight() -> None:
    budget = InFlight(limit=10_000, commands=3)
    for _ in range(3):
        assert budget.fits(1)
        budget.take(1)
    assert not budget.fits(1), "a fourth start waits, however small"
    budget.give_back(1)
    assert budget.fits(1) and budget.issued == 2
