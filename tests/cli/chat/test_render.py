"""How the REPL shows chunks: decisions (an answer with its text), graph task changes with why."""

from __future__ import annotations

from rich.console import Console

from cli.chat.render import Renderer, without_output
from cli.chat.state import ChatState, Request
from contracts import (
    Answer,
    CallContext,
    DecisionTaken,
    GateAsk,
    TaskChanged,
    TaskStatus,
    TaskStreamChunk,
    ToolApprovalAsk,
    ToolCalled,
)
from core.wording import decision_text, line_of
from tests.support import published


def shown(*chunks: TaskStreamChunk, request: Request | None = None) -> str:
    console = Console(record=True, width=120, color_system=None)
    state = ChatState(key="chat-1", agent="Agent:demo", profile="default", project="/p", principal="alice")
    renderer = Renderer(console, state)
    for chunk in chunks:
        renderer.chunk(chunk)
    if request is not None:
        renderer.request(request)
    return console.export_text()


def test_decisions_say_who_and_an_answer_its_text() -> None:
    approved = DecisionTaken(interaction_id="tool_1", approved=True, decided_by="bob", channel="http")
    assert decision_text(approved) == "✓ tool_1 approved by bob (http)"
    answered = approved.model_copy(update={"interaction_id": "input_1", "said": Answer(text="Bob")})
    assert decision_text(answered) == "✓ input_1 answered by bob (http): Bob"
    assert shown(published(answered)).strip() == "✓ input_1 answered by bob (http): Bob"
    assert line_of(answered).tone == "ok"


def test_graph_task_changes_show_versions_past_the_first_and_why() -> None:
    text = shown(
        published(TaskChanged(task_id="b", task_uuid="u", status=TaskStatus.WAITING, version=0)),
        published(
            TaskChanged(
                task_id="b", task_uuid="u", status=TaskStatus.READY, version=0, reason="confirmed by bob"
            )
        ),
        published(TaskChanged(task_id="b", task_uuid="u", status=TaskStatus.RUNNING, version=2)),
        published(TaskChanged(task_id="l", task_uuid="v", instance=3, status=TaskStatus.SKIPPED)),
    )
    assert text.splitlines() == [
        "◆ graph task b: waiting",
        "◆ graph task b: ready (confirmed by bob)",
        "◆ graph task b v2: running",
        "◆ graph task l #3: skipped",
    ]


def test_a_gate_shows_its_prompt_and_the_task_input() -> None:
    gate = Request(
        "gate_1",
        "graph:g",
        GateAsk(task_id="b", task_uuid="u", prompt="Run b?", assignee_id="Agent:demo", input_data={"n": 1}),
    )
    lines = [line.rstrip() for line in shown(request=gate).splitlines() if line.strip()]
    assert lines == [
        "? gate_1 · graph task b waits: Run b?",
        "  run by Agent:demo with",
        "  {",
        '    "n": 1',
        "  }",
    ]


HIDDEN = "\u202e\x9b\u200b\ufeff"
"""A direction override, CSI, a zero-width space, a byte-order mark: each prints nothing (CSI would
even act on the person's terminal)."""
ESCAPED = r"\u202e\x9b\u200b\ufeff"


def test_a_request_shows_every_character_that_prints_nothing_escaped() -> None:
    """The command, other tools' arguments, the folder, the reason, the running call's line and
    the `/pending` line alike."""
    asked = ToolApprovalAsk(
        tool="terminal",
        arguments={"command": f"rm -rf /tmp/a{HIDDEN}b"},
        summary=f"terminal: rm -rf /tmp/a{HIDDEN}b",
        context=CallContext(cwd=f"/srv/a{HIDDEN}b", sandbox="workspace-write"),
        reason=f"`/tmp/a{HIDDEN}b` is outside the trusted folders",
    )
    mail = ToolApprovalAsk(tool="mail", arguments={"to": f"a{HIDDEN}b"})
    call = published(
        ToolCalled(
            tool_name="terminal", tool_params=asked.arguments, summary=asked.summary, context=asked.context
        )
    )
    command = Request("tool_1", "session:chat-1", asked)
    text = shown(call, request=command) + shown(request=Request("tool_2", "session:chat-1", mail))

    assert not set(HIDDEN) & set(text)
    assert [line.strip() for line in text.splitlines() if f"a{ESCAPED}b" in line] == [
        f"→ terminal: rm -rf /tmp/a{ESCAPED}b  (in /srv/a{ESCAPED}b)",
        f"rm -rf /tmp/a{ESCAPED}b",
        f"in /srv/a{ESCAPED}b (sandbox workspace-write)",
        f"reason: `/tmp/a{ESCAPED}b` is outside the trusted folders",
        f'"to": "a{ESCAPED}b"',
    ]
    assert command.line() == f"terminal: rm -rf /tmp/a{ESCAPED}b"


def test_an_answer_names_the_command_output_it_would_repeat() -> None:
    assert (
        without_output("exit status 0:\nhello\nworld\n", "hello\nworld\n")
        == "exit status 0:\n(output above)\n"
    )
    long = "".join(f"line {n}\n" for n in range(400))
    cut = "exit status 0:\n" + long[:1499] + "…"
    assert without_output(cut, long) == "exit status 0:\n(output above)"
    assert without_output("exit status 0:\nother", "hello\n") == "exit status 0:\nother"
