"""The terminal tool end to end: `!command` proposed by the demo agent, approved or denied over HTTP,
output streamed to the session while it runs; read-only commands in the trusted folder run freely."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest

from contracts import (
    CommandEnded,
    CommandFailed,
    CommandOutput,
    CommandPrompt,
    CommandToolUse,
    GraphView,
    Output,
    SandboxProfile,
    TaskChunkType,
    TaskStreamChunk,
    ToolUsed,
)
from core.settings import Settings

from ..activities.tools.terminal.sandboxing import needs_bwrap
from ..conftest import assert_eventually
from ..support import asked, asked_content, collect_events, event_of, events, terminal_settings
from ..workflows.graph.flows import task
from .test_sessions import decide, is_type, new_key


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """The test's settings; the terminal starts (and is trusted) in its own folder. Approved commands
    run without a sandbox here (`full`): the sandboxes have their own tests, which need bwrap."""
    return terminal_settings(tmp_path, task_queue, terminal_sandbox=SandboxProfile.FULL)


async def ask(http: httpx.AsyncClient, key: str, command: str) -> tuple[str, int]:
    """Send `!command`; its approval request's interaction id and offset."""
    sent = await http.post(
        f"/sessions/{key}/messages?wait=true", json={"content": f"!{command}", "principal": "alice"}
    )
    assert sent.status_code == 202 and sent.json()["status"] == "waiting", sent.text
    after = sent.json()["next_offset"] - 2
    chunks = await collect_events(
        http, key, is_type(TaskChunkType.TOOL_APPROVAL_REQUEST), params={"after": after}
    )
    request = chunks[-1]
    assert asked_content(request)["tool_name"] == "terminal" and asked_content(request)["tool_params"] == {
        "command": command
    }
    return str(asked(request).interaction_id), request.sequence_id


async def test_an_approved_command_streams_its_output_and_reports_its_status(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, offset = await ask(http, key, "echo hello && sleep 1 && echo done")
    outcome = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert outcome.status_code == 200, outcome.text
    result = outcome.json()["tool_result"]
    assert result["ok"] and result["content"]["output"] == "hello\ndone\n"
    assert result["metadata"]["exit_status"] == 0 and result["metadata"]["command_success"] is True
    assert result["metadata"]["execution_time"] >= 1.0
    chunks = await collect_events(http, key, turn_over, params={"after": offset})
    streamed = [c for c in chunks if isinstance(c.content, CommandOutput)]
    said = [event_of(c, CommandOutput) for c in streamed]
    assert "".join(e.text for e in said) == "hello\ndone\n"
    assert all(e.terminal_type == "generic" and e.source_tool == "terminal" for e in said)
    assert sum(e.content_length or 0 for e in said) == len("hello\ndone\n")
    hello = next(c for c in streamed if "hello" in event_of(c, CommandOutput).text)
    done = next(c for c in streamed if "done" in event_of(c, CommandOutput).text)
    # Streamed while the command ran (a second apart), not handed over in one piece at its end; the
    # chunks' times are not compared: on a starved machine the first is published late.
    assert hello.sequence_id < done.sequence_id and "done" not in event_of(hello, CommandOutput).text, (
        "hello came on its own, first"
    )
    complete = next(c for c in chunks if c.chunk_type == TaskChunkType.COMPLETE)
    ended = event_of(complete, CommandEnded)
    assert complete.sequence_id > done.sequence_id and not complete.is_final
    assert ended.exit_status == 0 and ended.command_success is True
    assert (ended.execution_time or 0) >= 1.0 and ended.terminal_type == "generic"
    used = next(c for c in chunks if c.chunk_type == TaskChunkType.TOOL_USE)
    assert used.sequence_id > complete.sequence_id
    assert event_of(used, ToolUsed).result.metadata["exit_status"] == 0


def turn_over(chunk: TaskStreamChunk) -> bool:
    """The turn's final chunk (a command's `complete` is not final)."""
    return chunk.is_final


async def test_a_large_output_is_kept_whole_as_an_artifact(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, _ = await ask(http, key, "seq 1 100000")
    result = (await decide(http, key, interaction_id, approved=True, principal="bob")).json()["tool_result"]
    assert result["ok"] and result["artifact"] is not None, "588,895 bytes of output do not fit in history"
    preview = result["content"]["output"]
    assert preview.startswith("1\n2\n3\n") and preview.endswith("99999\n100000\n")
    assert f"artifact {result['artifact']['artifact_id']}" in preview and len(preview) < 20_000
    whole = await http.get(f"/artifacts/{result['artifact']['artifact_id']}")
    assert whole.status_code == 200
    output = whole.json()["output"]
    assert output == "".join(f"{n}\n" for n in range(1, 100_001))


async def test_a_denied_command_never_runs(http: httpx.AsyncClient, settings: Settings) -> None:
    assert settings.tools.terminal_cwd is not None
    target = settings.tools.terminal_cwd / "x"
    target.write_text("keep me")
    key = new_key()
    interaction_id, offset = await ask(http, key, "rm -rf x")
    assert (await decide(http, key, interaction_id, approved=False, principal="bob")).status_code == 200
    await collect_events(http, key, turn_over, params={"after": offset})
    assert target.read_text() == "keep me"


async def test_state_is_kept_between_commands_and_a_failure_has_its_status(http: httpx.AsyncClient) -> None:
    key = new_key()
    first, _ = await ask(http, key, "mkdir sub && cd sub && export GREETING=hi")
    assert (await decide(http, key, first, approved=True, principal="bob")).json()["tool_result"]["ok"]
    second, _ = await ask(http, key, "echo $GREETING from $(basename $PWD); ls /nonexistent")
    pending = (await http.get(f"/sessions/{key}")).json()["pending_interactions"][0]
    assert pending["content"]["context"]["cwd"].endswith("/work/sub"), "the request says where it runs"
    result = (await decide(http, key, second, approved=True, principal="bob")).json()["tool_result"]
    assert result["content"]["output"].startswith("hi from sub\n")
    assert (
        result["ok"] is False
        and result["metadata"]["exit_status"] == 2
        and result["error"] == "exit status 2"
    )


@needs_bwrap
async def test_a_read_only_command_in_the_trusted_folder_needs_no_approval(
    http: httpx.AsyncClient, settings: Settings
) -> None:
    key = new_key()
    sent = await http.post(f"/sessions/{key}/messages?wait=true", json={"content": "!pwd"})
    assert sent.status_code == 200 and sent.json()["status"] == "completed", sent.text
    assert sent.json()["answer"] == f"exit status 0:\n{settings.tools.terminal_cwd}\n"


AGENT_CLI = Path(__file__).parents[1] / "fakes" / "agent_cli.py"


async def test_an_agent_cli_streams_typed_chunks_and_takes_the_next_command_as_input(
    http: httpx.AsyncClient,
) -> None:
    key = new_key()
    started, _ = await ask(http, key, f"{sys.executable} {AGENT_CLI}")
    result = (await decide(http, key, started, approved=True, principal="bob")).json()["tool_result"]
    assert result["ok"] and result["content"]["waiting_for_input"] == ">"
    question, offset = await ask(http, key, "what is here?")
    result = (await decide(http, key, question, approved=True, principal="bob")).json()["tool_result"]
    assert result["content"]["output"].endswith("You asked: what is here?\nThat is all I know.\n")
    chunks = await collect_events(http, key, turn_over, params={"after": offset})
    typed = [c for c in chunks if isinstance(c.content, Output) and c.content.source_tool == "terminal"]
    kinds = [c.chunk_type for c in typed]
    assert kinds == ["thinking", "tool_use", "content", "pending", "complete"], kinds
    assert event_of(typed[1], CommandToolUse).tool_name == "fs_read"
    assert event_of(typed[3], CommandPrompt).prompt_text == ">"
    assert all(event_of(c, Output).terminal_type == "qcli" for c in typed)
    quit_, _ = await ask(http, key, "/quit")
    result = (await decide(http, key, quit_, approved=True, principal="bob")).json()["tool_result"]
    assert result["content"]["output"] == "bye\n" and result["metadata"]["exit_status"] == 0


async def test_a_graph_task_streams_its_command_output_on_the_task_run_events(
    http: httpx.AsyncClient,
) -> None:
    blueprint = {"new_tasks": [task("build", input_data={"command": "echo hello && sleep 1 && echo done"})]}
    created = await http.post("/graphs", json={"blueprint": blueprint})
    assert created.status_code == 201, created.text
    gid, task_uuid = created.json()["graph_id"], created.json()["tasks"]["build"]
    pending = await assert_eventually(
        lambda: graph_view(http, gid), lambda v: len(v.pending_interactions) == 1, within=30
    )
    request = pending.pending_interactions[0]
    assert isinstance(request.content, dict)
    assert request.content["tool_params"] == {"command": "echo hello && sleep 1 && echo done"}
    run_events = f"/graphs/{gid}/tasks/{task_uuid}/events"
    decided = await http.post(
        f"/graphs/{gid}/interactions/{request.interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert (
        decided.status_code == 200 and decided.json()["tool_result"]["content"]["output"] == "hello\ndone\n"
    )
    chunks = await collect_events(http, "", is_tool_result, path=run_events, within=30)
    streamed = [c for c in chunks if isinstance(c.content, Output) and c.content.source_tool == "terminal"]
    assert [c.chunk_type for c in streamed][-1] == TaskChunkType.COMPLETE
    assert "".join(e.text for e in events(streamed, CommandOutput)) == "hello\ndone\n"
    ended = event_of(streamed[-1], CommandEnded)
    assert ended.exit_status == 0 and (ended.execution_time or 0) >= 1.0
    no_version = await http.get(run_events, params={"version": 2})
    assert no_version.status_code == 404 and "has no version 2; it has: 1" in no_version.json()["detail"]


def is_tool_result(chunk: TaskStreamChunk) -> bool:
    return isinstance(chunk.content, ToolUsed)


async def graph_view(http: httpx.AsyncClient, graph_id: str) -> GraphView:
    response = await http.get(f"/graphs/{graph_id}")
    assert response.status_code == 200, response.text
    return GraphView.model_validate(response.json())


async def test_a_cancelled_turn_interrupts_its_command_with_ctrl_c(http: httpx.AsyncClient) -> None:
    key = new_key()
    interaction_id, offset = await ask(http, key, "echo started && sleep 60")
    decision = asyncio.create_task(decide(http, key, interaction_id, approved=True, principal="bob"))
    try:
        await collect_events(
            http,
            key,
            lambda c: isinstance(c.content, CommandOutput) and c.content.text == "started\n",
            params={"after": offset},
        )
        cancelled = await http.post(f"/sessions/{key}/turn/cancel", json={"reason": "too slow"})
        assert cancelled.status_code == 200, cancelled.text
        chunks = await collect_events(
            http, key, lambda c: c.chunk_type == TaskChunkType.ERROR, params={"after": offset}
        )
        failed = event_of(chunks[-1], CommandFailed)
        assert failed.error_type == "cancelled" and failed.source_tool == "terminal"
    finally:
        answered = await decision
    assert answered.status_code == 200, answered.text
    assert answered.json()["tool_result"]["error"] == "cancelled while it ran", "the approver is answered"
    after, _ = await ask(http, key, "echo still usable && true")
    result = (await decide(http, key, after, approved=True, principal="bob")).json()["tool_result"]
    assert result["ok"] and result["content"]["output"] == "still usable\n"
