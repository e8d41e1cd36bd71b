"""How a graph or a session reads once Temporal ended its workflow while it ran (`endings`).

Its last workflow task's state still says `running`: here it reads as it ended (`terminated`,
`timed_out`, `failed`, `cancelled`) with how, nothing in it runs or waits (a task whose run was
interrupted, or that waited at its gate, reads `cancelled`, saying so; one that was about to start
reads `pending`), and what it asked is withdrawn (no pending interactions). A graph or session
that had already finished by itself reads as it finished. Pure functions of contracts models.
"""

from __future__ import annotations

from contracts import (
    GraphStatus,
    GraphTask,
    GraphView,
    LiveSession,
    SessionStatus,
    TaskStatus,
    TaskView,
)

from .endings import Ending

STILL_GOING = (GraphStatus.RUNNING, GraphStatus.PAUSED)
"""Graph statuses a run Temporal ended cannot keep."""
SESSION_GOING = (
    SessionStatus.ACTIVE,
    SessionStatus.WAITING_APPROVAL,
    SessionStatus.WAITING_INPUT,
    SessionStatus.PAUSED,
)
"""Session statuses a run Temporal ended cannot keep."""
SHOWN_AS = {
    TaskStatus.RUNNING: TaskStatus.CANCELLED,
    TaskStatus.WAITING: TaskStatus.CANCELLED,
    TaskStatus.READY: TaskStatus.PENDING,
}
"""How a task that was in motion reads in a graph Temporal ended."""


def graph_reason(ending: Ending) -> str:
    """Why the graph reads as it does, and (unless it was cancelled) how to take it up again."""
    if ending.status == GraphStatus.CANCELLED:
        return f"its workflow {ending.words()}"
    return f"its workflow {ending.words()}; roll a task back (ROLLBACK_AND_MODIFY) or send a blueprint to reopen it"


def session_reason(ending: Ending) -> str:
    """Why the session reads as it does, and (unless it was cancelled) how to take it up again."""
    if ending.status == SessionStatus.CANCELLED:
        return f"its workflow {ending.words()}"
    return f"its workflow {ending.words()}; a message starts it again as a new conversation"


def task_reason(ending: Ending) -> str:
    """Why a task that was in motion reads as it does."""
    return f"interrupted: its graph's workflow {ending.words()}; it runs again if the graph is reopened"


def graph_view(found: GraphView, ending: Ending | None) -> GraphView:
    """The graph as it ended (the view as found when it finished by itself)."""
    if ending is None or found.status not in STILL_GOING:
        return found
    counts: dict[str, int] = {}
    for status, count in found.counts.items():
        shown = SHOWN_AS.get(TaskStatus(status), TaskStatus(status)).value
        counts[shown] = counts.get(shown, 0) + count
    return found.model_copy(
        update={
            "status": GraphStatus(ending.status),
            "reason": graph_reason(ending),
            "finished_at": ending.at,
            "counts": counts,
            "tasks": [_task_view(task, ending) for task in found.tasks],
            "pending_interactions": [],
        }
    )


def _task_view(task: TaskView, ending: Ending) -> TaskView:
    if task.status not in SHOWN_AS:
        return task
    return task.model_copy(update={"status": SHOWN_AS[task.status], "reason": task_reason(ending)})


def graph_task(task: GraphTask, ending: Ending | None) -> GraphTask:
    """One task of a graph as it ended: its run in flight (and loop instances) cancelled, its gate
    withdrawn."""
    if ending is None or task.status not in SHOWN_AS:
        return task
    why = task_reason(ending)
    versions = list(task.versions)
    if versions and versions[-1].status in SHOWN_AS:
        last = versions[-1]
        instances = [
            i.model_copy(update={"status": SHOWN_AS[i.status], "error": why, "gate_interaction": None})
            if i.status in SHOWN_AS
            else i
            for i in last.instances
        ]
        versions[-1] = last.model_copy(
            update={
                "status": TaskStatus.CANCELLED,
                "error": why,
                "finished_at": ending.at,
                "instances": instances,
            }
        )
    return task.model_copy(
        update={
            "status": SHOWN_AS[task.status],
            "reason": why,
            "gate_interaction": None,
            "versions": versions,
        }
    )


def session(found: LiveSession, ending: Ending | None) -> LiveSession:
    """The session as it ended (as found when it finished by itself)."""
    if ending is None or found.status not in SESSION_GOING:
        return found
    return found.model_copy(
        update={
            "status": SessionStatus(ending.status),
            "reason": session_reason(ending),
            "pending_interactions": [],
        }
    )
