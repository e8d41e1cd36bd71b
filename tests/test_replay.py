"""Every recorded history in tests/histories/ must replay against today's workflow code.

A failure here means a change would break workflows already running in production: gate
the change behind `versioning.patched()` (`workflows/versioning`) instead of editing the old path.
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
"""The id each history ran under (a graph names its task runs after it); older ones: the stem."""
HISTORIES = sorted(p for p in HERE.glob("*.json") if p.name != "workflow_ids.json")


def test_there_are_histories_to_replay() -> None:
    names = {path.stem for path in HISTORIES}
    for scenario in ("session_approved", "session_denied", "session_timed_out"):
        assert scenario in names, "the original (regular-activity tool run) recordings must stay"
        assert f"{scenario}.quick-tool-local-activity" in names
    for graph in ("graph_rollback", "graph_gated", "graph_gated_task_run"):
        assert any(name.startswith(f"{graph}.") for name in names), f"a recorded {graph} history"
    for decided in ("session_refused", "session_relayed", "session_denied", "graph_gated_task_run"):
        assert f"{decided}.one-door" in names, "typed decisions: refusals audited, chat replies, relays"


def recorded(path: Path) -> WorkflowHistory:
    """The history in `path`: read by the test, not at collection (every parallel worker collects
    every test, and parsing all of them took each a second)."""
    return WorkflowHistory.from_json(WORKFLOW_IDS.get(path.stem, path.stem), path.read_text())


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_history_replays(path: Path) -> None:
    result = await replayer(pydantic_data_converter).replay_workflow(
        recorded(path), raise_on_replay_failure=True
    )
    assert result.replay_failure is None
