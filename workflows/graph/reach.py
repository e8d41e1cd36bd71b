"""Which tasks of a graph can ever run, so that a GOTO whose target never can is refused at the door.

A task runs when it is a root (no incoming edge, and not a GOTO handler), when a task that runs
leads to it by an edge, or when a task that runs names it in its `on_failure` GOTO. A handler is a
GOTO target that nothing leads to by an edge and that is upstream of no task whose GOTO names it
(the rules' `goto_only`: it waits for a failure). A task that has run already can run again (a
rollback). Handlers that only name each other (`a` fails over to `b`, `b` to `a`, nothing else
leading to either) can never run: the GOTOs between them would wait for failures no task causes.

Pure: blueprint ids in, problems out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .walk import reached, upstream


@dataclass(frozen=True)
class Shape:
    """The parts of a graph reachability depends on, by blueprint id."""

    tasks: list[str]
    edges: list[tuple[str, str]]
    gotos: dict[str, str]
    """Task → the task its `on_failure` GOTO names."""
    ran: frozenset[str] = frozenset()
    """Tasks that have run (a rollback can run them again)."""


def runnable(shape: Shape) -> set[str]:
    """Every task that can run."""
    handlers = _handlers(shape)
    fed = {target for _, target in shape.edges}
    roots = {task for task in shape.tasks if task not in fed and task not in handlers} | set(shape.ran)
    return reached([*shape.edges, *shape.gotos.items()], roots)


def dead_gotos(shape: Shape, before: Shape | None = None) -> list[str]:
    """A problem for each GOTO whose target can never run (leaving out those `before` had)."""
    can = runnable(shape)
    handlers = _handlers(shape)
    old = {(s, t) for s, t in before.gotos.items() if t not in runnable(before)} if before else set()
    problems = []
    for source, target in shape.gotos.items():
        if target in can or (source, target) in old:
            continue
        waiting = sorted(upstream([*shape.edges, *shape.gotos.items()], target) & handlers - can)
        problems.append(
            f"task {source!r}: directives.on_failure GOTO names task {target!r}, which can never run: "
            f"{_listed(waiting)} only when a failure leads there (GOTO targets that no edge leads to and "
            "that are upstream of no task whose GOTO names them), and only tasks behind them could fail; "
            "give one of them an incoming edge from a task that runs, or continue at a task that runs"
        )
    return problems


def _listed(tasks: list[str]) -> str:
    names = ", ".join(repr(task) for task in tasks)
    return f"task {names} runs" if len(tasks) == 1 else f"tasks {names} run"


def _handlers(shape: Shape) -> set[str]:
    """GOTO targets nothing leads to by an edge and that are upstream of no task whose GOTO names them."""
    fed = {target for _, target in shape.edges}
    retries = {
        target
        for source, target in shape.gotos.items()
        if source in reached(shape.edges, [target], with_starts=False)
    }
    return {target for target in shape.gotos.values() if target not in fed and target not in retries}
