"""Every recorded history in tests/histories/ must replay against today's workflow code.

1.0's are one per scenario, `<scenario>.v1.json` (`tests/histories/record.py`). A failure here
means a change would break workflows already running in production: gate the change
(`workflows/versioning`, decided when a run starts) and record a history of its new path beside
the old ones, instead of editing the old path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from .support import replayer

HERE = Path(__file__).parent / "histories"
WORKFLOW_IDS: dict[str, str] = json.loads((HERE / "workflow_ids.json").read_text())
"""The id each history ran under (a graph names its task runs after it)."""
HISTORIES = sorted(p for p in HERE.glob("*.json") if p.name != "workflow_ids.json")

SESSIONS = (
    "approved",
    "denied",
    "timed_out",
    "refused",
    "relayed",
    "planned",
    "lark_chat",
    "dingtalk_chat",
    "tool_batch",
    "watched",
    "granted",
    "edited",
    "questioned",
    "turn_cancelled",
    "two_people",
    "lark_escalated",
    "notified",
    "terminal",
    "terminal_cancelled",
    "sandboxed",
    "autogen",
    "elicited",
    "ruled",
    "rule_not_maker",
    "artifact",
    "followed",
    "ended",
    "terminal_restarted",
    "continued",
)
GRAPHS = (
    "rollback",
    "gated",
    "gated_task_run",
    "retry",
    "cancelled",
    "loop_pages",
    "handed_over",
    "inputs_by_reference",
    "inputs_by_reference_task_run",
    "wide_starts",
    "followed",
    "refused",
    "followed_cancelled",
)
BASELINE = [f"session_{name}.v1" for name in SESSIONS] + [f"graph_{name}.v1" for name in GRAPHS]
"""1.0's histories: every scenario `record.py` drives, recorded on 1.0's code."""


def test_there_are_histories_to_replay() -> None:
    names = {path.stem for path in HISTORIES}
    missing = [name for name in BASELINE if name not in names]
    assert missing == [], "1.0's history of each scenario stays (a gated change adds, never replaces)"
    assert set(WORKFLOW_IDS) == names, "each history's workflow id is kept"


def recorded(path: Path) -> WorkflowHistory:
    """The history in `path`: read by the test, not at collection (every parallel worker collects
    every test, and parsing all of them took each a second)."""
    return WorkflowHistory.from_json(WORKFLOW_IDS[path.stem], path.read_text())


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path) -> None:
    result = await replayer(pydantic_data_converter).replay_workflow(
        recorded(path), raise_on_replay_failure=True
    )
    assert result.replay_failure is None
