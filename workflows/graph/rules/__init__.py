"""The rules of a task graph: a pure, deterministic state machine over `GraphState`.

`Scheduler` is the one entry (`scheduler`); its parts: `settling` (edges resolved, tasks settled:
the one way to READY), `decisions` (a gate's decision), `outcomes` (a run's end; failing),
`gotos` (on_failure GOTO and its handlers), `changes` (rollback and `update_tasks`), `resets`
(what a rollback and a GOTO share), `loops`, `outputs` (whole outputs) and `progress` (what one
step decided, and the small facts about a task). No commands: the workflow acts on `Progress`.
"""

from .progress import Gate, Progress, Run
from .resets import Reset
from .scheduler import Scheduler

__all__ = ["Gate", "Progress", "Reset", "Run", "Scheduler"]
