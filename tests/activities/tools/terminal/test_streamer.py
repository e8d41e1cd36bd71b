"""Output streamed while a command runs: one `tool_outputs` signal per batch of chunks, in order."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from activities.tools.terminal.chunks import TerminalChunk, complete_chunk, content_chunk
from activities.tools.terminal.streamer import Streamer
from contracts import CommandEnded, Output, SandboxProfile, ToolOutputBatch
from contracts.names import TOOL_OUTPUTS
from core.settings import Settings, ToolSettings

from ....support import collect_events, event_of

BURST_CLI = Path(__file__).with_name("burst_cli.py")
BURST = 100
"""Tool uses in one answer of the burst CLI: 200 chunks written at once, then its prompt."""


class Recorder:
    """A client whose workflow handles keep the signals sent to them."""

    def __init__(self) -> None:
        self.signals: list[tuple[str, str, Any]] = []
        """(workflow id, signal name, argument), in the order sent."""
        self._to = ""

    def get_workflow_handle(self, workflow_id: str) -> Recorder:
        self._to = workflow_id
        return self

    async def signal(self, name: str, arg: Any) -> None:
        self.signals.append((self._to, name, arg))


def tool_use(name: str) -> TerminalChunk:
    return TerminalChunk("tool_use", f"Using tool: {name}", {"tool_name": name, "terminal_type": "qcli"})


async def test_each_flush_is_one_signal_with_its_chunks_in_order() -> None:
    recorder = Recorder()
    done = complete_chunk(
        "exit status 0", execution_time=0.1, success=True, exit_status=0, terminal_type="qcli"
    )

    async def stream() -> None:
        streamer = Streamer("terminal", "session:t", "tool_1")
        await streamer.flush()  # nothing to send yet
        streamer.add(tool_use("a"))
        streamer.add(content_chunk("one\n", 4, "qcli"))
        await streamer.flush()
        streamer.add(tool_use("b"))
        streamer.add(content_chunk("two\n", 4, "qcli"))
        streamer.add(content_chunk("three\n", 6, "qcli"))  # after content: one chunk
        await streamer.finish(done)

    await ActivityEnvironment(client=cast(Client, recorder)).run(stream)
    assert [(to, name) for to, name, _ in recorder.signals] == [("session:t", TOOL_OUTPUTS)] * 2
    batches = [batch for _, _, batch in recorder.signals]
    assert all(isinstance(batch, ToolOutputBatch) for batch in batches)
    sent = [[(o.chunk_type, o.text) for o in batch.outputs] for batch in batches]
    assert sent == [
        [("tool_use", "Using tool: a"), ("content", "one\n")],
        [("tool_use", "Using tool: b"), ("content", "two\nthree\n"), ("complete", "exit status 0")],
    ]
    assert {(o.interaction_id, o.tool_id) for batch in batches for o in batch.outputs} == {
        ("tool_1", "terminal")
    }


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """The test's settings, the terminal starting in its own folder; approved commands run without a
    sandbox (`full`), so a program may wait at its prompt (the sandboxes have their own tests)."""
    work = tmp_path / "work"
    work.mkdir()
    tools = ToolSettings(terminal_cwd=work, terminal_sandbox=SandboxProfile.FULL)
    return settings.model_copy(update={"tools": tools})


async def approve(http: httpx.AsyncClient, key: str, command: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Send `!command` and approve it: how the message was accepted, and the tool's result."""
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": f"!{command}", "principal": "alice"}
    )
    assert sent.status_code == 202 and sent.json()["status"] == "waiting", sent.text
    interaction_id = sent.json()["pending"]["interaction_id"]
    decided = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code == 200, decided.text
    return sent.json(), decided.json()["tool_result"]


async def test_a_burst_of_output_reaches_the_session_whole_and_in_order_in_a_few_signals(
    http: httpx.AsyncClient, client: Client
) -> None:
    """An agent CLI answers with 200 chunks at once: the session's stream shows every one, in order,
    while its history holds a few `tool_outputs` signals for them instead of one event per chunk."""
    key = f"t-{uuid.uuid4().hex[:10]}"
    _, started = await approve(http, key, f"{sys.executable} {BURST_CLI} {BURST}")
    assert started["ok"] and started["content"]["waiting_for_input"] == ">", started
    accepted, result = await approve(http, key, "burst")
    asked = accepted["pending"]["interaction_id"]
    assert result["ok"] and result["content"]["waiting_for_input"] == ">", result
    after = accepted["next_offset"] - 1
    chunks = await collect_events(http, key, lambda c: c.is_final, params={"after": after})  # the turn's end
    streamed = [c for c in chunks if isinstance(c.content, Output) and c.content.source_tool == "terminal"]
    assert {event_of(c, Output).interaction_id for c in streamed} == {asked}
    said = [(str(c.chunk_type), event_of(c, Output).text) for c in streamed]
    answer = [(kind, text) for i in range(BURST) for kind, text in burst_chunks(i)]
    assert said[:-1] == [*answer, ("pending", ">")], said[:5]
    assert event_of(streamed[-1], CommandEnded).command_success is True

    history = await client.get_workflow_handle(accepted["workflow_id"]).fetch_history()
    signaled = [
        event.workflow_execution_signaled_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    ]
    names = {s.signal_name for s in signaled}
    assert TOOL_OUTPUTS in names and "tool_output" not in names, f"output comes in batches only: {names}"
    batches = [
        (await client.data_converter.decode(s.input.payloads, [ToolOutputBatch]))[0]
        for s in signaled
        if s.signal_name == TOOL_OUTPUTS
    ]
    ours = [batch for batch in batches if batch.outputs[0].interaction_id == asked]
    carried = [(o.chunk_type, o.text) for batch in ours for o in batch.outputs]
    assert carried == said, "each chunk once, as shown"
    assert len(ours) * 10 <= len(streamed), f"{len(streamed)} chunks took {len(ours)} signals"


def burst_chunks(i: int) -> tuple[tuple[str, str], tuple[str, str]]:
    """The burst CLI's `i`th tool use and its result, as the stream shows them."""
    return ("tool_use", f"Using tool: t{i}"), ("content", f"result {i} of burst\n")
