"""A history the SDK recorded and cannot replay: a canary for the upgrade that mends it.

`sdk/session_followed.lone_marker.json` was recorded once (of hundreds of recordings, on a loaded
machine) by `record.py session_followed` with temporalio 1.35.0. The session's first agent step
ran as a local activity while a `watch` update arrived. The worker completed that first workflow
task with the local activity's marker alone; what the workflow did with its result (the search
attribute upsert and the request's timer) went into the next task, after the update's acceptance
(events 5-13). Replaying it, the SDK hands the workflow the activity's result in the first task,
the workflow issues the upsert there, and the next history event is the update: TMPRL1100.

The workflow code is not at fault (the same code replays every other recording), and 300 bare
workflows doing the same (a local activity, then an upsert, with updates arriving) recorded none
such. What it means in production, and the remedy (a reset to before the lone marker), is in
docs/production.md, "A history the SDK cannot replay". When this test fails, a temporalio upgrade
replays the history: drop the file, this test and that section.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from tests.support import replayer

LONE_MARKER = Path(__file__).parent / "sdk" / "session_followed.lone_marker.json"


async def test_the_sdk_still_cannot_replay_a_marker_completed_alone_before_an_update() -> None:
    history = WorkflowHistory.from_json("session:history-followed", LONE_MARKER.read_text())
    assert [EventType.Name(event.event_type) for event in history.events[4:13]] == [
        "EVENT_TYPE_WORKFLOW_TASK_COMPLETED",  # 5: the first task, completed with...
        "EVENT_TYPE_MARKER_RECORDED",  # 6: ...the local activity's marker alone
        "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED",
        "EVENT_TYPE_WORKFLOW_TASK_STARTED",
        "EVENT_TYPE_WORKFLOW_TASK_COMPLETED",
        "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED",  # 10: the watch...
        "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED",
        "EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES",  # 12: ...before what the result led to
        "EVENT_TYPE_TIMER_STARTED",
    ]

    result = await replayer(pydantic_data_converter).replay_workflow(history, raise_on_replay_failure=False)

    assert result.replay_failure is not None, "this temporalio replays it: drop the file and this test"
    assert (
        "UpsertWorkflowSearchAttributesMachine does not handle HistoryEvent(id: 10, "
        "WorkflowExecutionUpdateAccepted)" in str(result.replay_failure)
    ), "it fails for another reason: the workflow code changed what its first task issues"
