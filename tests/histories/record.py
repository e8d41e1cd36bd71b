"""Record the reference histories replayed by `tests/test_replay.py`.

1.0's baseline is one history per scenario, `<scenario>.v1.json` (a graph's task run beside its
graph: `<scenario>_task_run.v1.json`), each workflow id in `workflow_ids.json`. After 1.0 every
change to the commands workflows issue is gated (`workflows/versioning`, or Worker Versioning):
run `.venv/bin/python -m tests.histories.record TAG [SCENARIO ...]` with a new tag (the change's
id) to add histories of its new path, and keep the old files: they prove that runs still open on
the old path replay. Files are never overwritten. Against a running server,
`synapse history export WORKFLOW_ID FILE` records any single workflow.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowHistory,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from api.calls import sessions as session_calls
from contracts import (
    AgentSpec,
    DecisionPolicy,
    GrantRevocation,
    GraphConfig,
    GraphIntervention,
    GraphQuery,
    GraphView,
    InboundMessage,
    LiveSession,
    NewRule,
    PlanBlueprint,
    Role,
    RuleDecision,
    RuleMatch,
    RuleScope,
    SandboxProfile,
    SessionConfig,
    SessionControl,
    WatchRequest,
)
from core.agent_registry import BUILTIN_AGENTS
from core.rules.store import RuleStore
from core.settings import (
    DingTalkSettings,
    LarkSettings,
    Settings,
    TemporalSettings,
    ToolSettings,
    WebhookSettings,
)
from worker import build_worker
from workflows.graph import AgentTaskWorkflow, TaskGraphWorkflow
from workflows.graph.state import GRAPH_EVENTS, GRAPH_TASK_TIMEOUT, GraphRunInput
from workflows.identity.ids import graph_workflow_id, session_workflow_id, task_run_workflow_id
from workflows.identity.search_attributes import SEARCH_ATTRIBUTES
from workflows.session import SessionWorkflow
from workflows.session.state import SessionRunInput
from workflows.versioning import GENERATION

from ..conftest import assert_eventually
from ..decisions import decided
from ..fakes.chat_completions import FakeChatCompletions, fake_chat_completions
from ..fakes.dingtalk_open_api import dingtalk_open_api
from ..fakes.lark_open_api import lark_open_api
from ..fakes.webhook import webhook_receiver
from ..support import temporal_binary
from .follower import Follower

HERE = Path(__file__).parent
WORKFLOW_IDS = HERE / "workflow_ids.json"
"""The workflow id each history was recorded under, by file stem (replay needs it)."""
DELETE = "DELETE FROM orders WHERE status = 'cancelled'"

Scenario = Callable[[Client, WorkflowHandle[SessionWorkflow, LiveSession]], Awaitable[None]]


async def _pending_id(handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> str:
    status = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status), lambda s: bool(s.pending_interactions)
    )
    return status.pending_interactions[0].interaction_id


async def _idle(handle: WorkflowHandle[SessionWorkflow, LiveSession], answers: int) -> None:
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: (
            s.status == "active"
            and sum(m.role == "assistant" and isinstance(m.content, str) for m in s.messages) >= answers
        ),
    )


async def approved(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete, approved over HTTP-style update, answered, then a read-only query, cancelled."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="SELECT COUNT(*) FROM orders"))
    await _idle(handle, 2)


async def planned(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete approved; then a plan, run as a child graph (its workflow task timeout leaves room to
    replay), whose outputs answer the turn."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    await _idle(handle, 1)
    plan = {"new_tasks": [{"task_id": "count", "assignee_id": "Agent:demo", "input_data": {"echo": 3}}]}
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="plan: " + json.dumps(plan)))
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: s.status == "active" and isinstance(s.messages[-1].content, dict),
        within=60,
    )


async def refused(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """The doors refuse whoever may not decide, each refusal audited: an operator's signalled decision,
    an operator's chat reply, a negated reply that denies; a second DELETE approved by an approver."""
    interaction = await _pending_id(handle)
    await handle.signal(
        SessionWorkflow.decide, decided(interaction_id=interaction, principal="otto", role=Role.operator)
    )
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="确认", sender_id="otto", role=Role.operator)
    )
    await handle.signal(
        SessionWorkflow.submit_message,
        InboundMessage(content="先别确认", sender_id="alice", role=Role.approver),
    )
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=DELETE, sender_id="alice"))
    await handle.execute_update(
        SessionWorkflow.decide_checked, decided(interaction_id=await _next_pending(handle, interaction))
    )
    await _idle(handle, 2)


RELAYED_PLAN = {
    "new_tasks": [
        {
            "task_id": "publish",
            "assignee_id": "Agent:demo",
            "input_data": {"echo": "published"},
            "directives": {"human_interaction": {"prompt": "Publish?"}},
        }
    ]
}


async def relayed(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied; then a plan whose gate the session relays: a chat reply 确认 is checked here and
    passed on to the graph (`decide`), whose decision comes back and is shown; the turn ends."""
    first = await _pending_id(handle)
    await handle.execute_update(SessionWorkflow.decide_checked, decided(interaction_id=first, approved=False))
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message,
        InboundMessage(content="plan: " + json.dumps(RELAYED_PLAN), sender_id="alice"),
    )
    await _next_pending(handle, first)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="确认", sender_id="alice", role=Role.approver)
    )
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: s.status == "active" and isinstance(s.messages[-1].content, dict),
        within=60,
    )


async def denied(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied with a comment; pause and resume; a chat reply 确认 on a second request."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=False, principal="bob", user_message="not today"),
    )
    await _idle(handle, 1)
    await handle.execute_update(SessionWorkflow.pause_checked, SessionControl(reason="check"))
    await handle.execute_update(SessionWorkflow.resume_checked, SessionControl())
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=DELETE, sender_id="alice"))
    await _pending_id(handle)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="取消", sender_id="alice", role=Role.approver)
    )
    await _idle(handle, 2)


async def timed_out(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Nobody answers within the (1 s) approval timeout: denied by system:timeout."""
    await _pending_id(handle)
    await _idle(handle, 1)


async def lark_chat(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """A Lark chat: the card goes out, the requester approves, the card and the answer follow."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="alice", channel="lark"),
    )
    await _idle(handle, 1)


async def not_a_reply(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """An admin's "ok" that may not reply (as AG-UI sends every message) reaches the waiting DELETE:
    it decides nothing; bob approves; the "ok" runs as the next turn."""
    interaction = await _pending_id(handle)
    ok = InboundMessage(
        content="ok",
        sender_id="carol",
        role=Role.admin,
        channel="ag-ui",
        message_id="m-history-not-a-reply",
        may_reply=False,
    )
    await handle.signal(SessionWorkflow.submit_message, ok)
    still = await handle.query(SessionWorkflow.get_status)  # after the signal's workflow task
    assert [p.interaction_id for p in still.pending_interactions] == [interaction], still
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    await _idle(handle, 2)


DINGTALK_CHAT = SessionConfig(
    session_key="dingtalk:cidHistory", channel="dingtalk", chat_id="cidHistory", approve_by_requester=True
)


async def dingtalk_chat(client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """A DingTalk group: the card goes out, the requester replies 确认, the card and the answer follow."""
    await _pending_id(handle)
    reply = InboundMessage(
        channel="dingtalk", sender_id="alice", chat_id="cidHistory", content="确认", role=Role.approver
    )
    await session_calls.send_message(client, "history", DINGTALK_CHAT, reply)
    await _idle(handle, 1)


async def batch(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """A model proposes two calls in one turn (a DELETE and a SELECT): the DELETE is approved."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    await _idle(handle, 1)


async def watched(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Watchers long-poll the stream (`watch`) through an approval; one is still waiting at the end."""
    interaction = await _pending_id(handle)
    now = await handle.execute_update(SessionWorkflow.watch, WatchRequest(next_offset=0))
    waiting = await handle.start_update(
        SessionWorkflow.watch,
        WatchRequest(next_offset=now.next_offset),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="bob"),
    )
    await waiting.result()
    await _idle(handle, 1)
    await handle.start_update(  # released by the cancel that ends the recording
        SessionWorkflow.watch,
        WatchRequest(next_offset=now.next_offset + 100),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )


async def _decide(
    handle: WorkflowHandle[SessionWorkflow, LiveSession],
    interaction: str,
    approved: bool,
    role: Role = Role.approver,
    **data: Any,
) -> None:
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(
            interaction_id=interaction,
            approved=approved,
            principal="bob",
            role=role,
            response_data=data or None,
        ),
    )


async def _next_pending(handle: WorkflowHandle[SessionWorkflow, LiveSession], after: str) -> str:
    status = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: bool(s.pending_interactions) and s.pending_interactions[0].interaction_id != after,
    )
    return status.pending_interactions[0].interaction_id


async def granted(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete approved with a `session_prefix` grant; another DELETE runs by it; the grant is
    revoked; the next DELETE is asked for and denied."""
    first = await _pending_id(handle)
    await _decide(handle, first, True, grant="session_prefix")
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="DELETE FROM orders WHERE id = 4")
    )
    await _idle(handle, 2)
    await handle.execute_update(
        SessionWorkflow.revoke_grant, GrantRevocation(grant_id="grant_1", principal="carol")
    )
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="DELETE FROM orders WHERE id = 5")
    )
    await _decide(handle, await _next_pending(handle, first), False)
    await _idle(handle, 3)


async def edited(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete approved with edited arguments (same kind: runs); a second one edited into a DROP is
    asked for again and denied."""
    first = await _pending_id(handle)
    await _decide(handle, first, True, arguments={"sql": "DELETE FROM orders WHERE id = 1"})
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=DELETE))
    second = await _next_pending(handle, first)
    await _decide(handle, second, True, arguments={"sql": "DROP TABLE orders"})
    await _decide(handle, await _next_pending(handle, second), False)
    await _idle(handle, 2)


async def questioned(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied; the agent asks a question (`ask_user`), answered with `response_data.text`."""
    first = await _pending_id(handle)
    await _decide(handle, first, False)
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="ask: Which table?", sender_id="bob")
    )
    await _decide(handle, await _next_pending(handle, first), True, text="orders")
    await _idle(handle, 2)


async def turn_cancelled(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete pending; the turn (not the session) is cancelled; the next message is answered."""
    await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.cancel_turn_checked, SessionControl(reason="wrong", principal="alice")
    )
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="SELECT COUNT(*) FROM orders"))
    await _idle(handle, 1)


async def two_people(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete under the two-person rule with escalation after 1 s: bob approves (1/2), the request
    escalates to dave, who approves second."""
    interaction = await _pending_id(handle)
    await _decide(handle, interaction, True)
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: bool(s.pending_interactions) and s.pending_interactions[0].escalated,
    )
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="dave"),
    )
    await _idle(handle, 1)


async def lark_escalated(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete in a Lark chat, escalated after 1 s to dave (the reminder mentions him, the card shows
    him), who approves."""
    interaction = await _pending_id(handle)
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: bool(s.pending_interactions) and s.pending_interactions[0].escalated,
    )
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal="lark:ou_dave"),
    )
    await _idle(handle, 1)


async def terminal(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied; `!echo hello && sleep 1 && echo done` approved: its output streams in by
    `tool_outputs` signals while it runs, then the result with its exit status; then `!cd / && pwd`
    approved, sent to the worker's own task queue (where the session's shell is)."""
    first = await _pending_id(handle)
    await _decide(handle, first, False)
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="!echo hello && sleep 1 && echo done")
    )
    second = await _next_pending(handle, first)
    await _decide(handle, second, True)
    await _idle(handle, 2)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!cd / && pwd"))
    await _decide(handle, await _next_pending(handle, second), True)
    await _idle(handle, 3)


async def terminal_cancelled(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied; `!echo started && sleep 30` approved, and its turn cancelled while it runs: the
    command gets Ctrl-C and the approver is answered; `!echo after && true` then runs."""
    first = await _pending_id(handle)
    await _decide(handle, first, False)
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!echo started && sleep 30"))
    second = await _next_pending(handle, first)
    await _cancelled_while_it_runs(handle, second, "bob")
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!echo after && true"))
    await _decide(handle, await _next_pending(handle, second), True)
    await _idle(handle, 2)


async def _cancelled_while_it_runs(
    handle: WorkflowHandle[SessionWorkflow, LiveSession], interaction: str, approver: str
) -> None:
    """`approver` approves the command (the update answers once it has run), and its turn is
    cancelled while it runs: the command gets Ctrl-C and the approver is answered."""
    approval = await handle.start_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=True, principal=approver),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    await assert_eventually(lambda: _running_activities(handle), lambda names: "run_tool" in names)
    await handle.execute_update(
        SessionWorkflow.cancel_turn_checked, SessionControl(reason="too slow", principal="alice")
    )
    await approval.result()


async def sandboxed(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied; `!ls` runs free in the read-only sandbox of the trusted folder; `!cd /tmp && pwd`
    asks (in the session's `read-only` sandbox) and is approved with `sandbox: full`; `!pwd` then asks
    (the terminal is in /tmp, outside the trusted folder) and is approved with a `session_prefix`
    grant; the next `!pwd` runs by that grant, in the same sandbox."""
    first = await _pending_id(handle)
    await _decide(handle, first, False)
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!ls"))
    await _idle(handle, 2)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!cd /tmp && pwd"))
    second = await _next_pending(handle, first)
    await _decide(handle, second, True, Role.admin, sandbox="full")  # wider than the session's: an admin
    await _idle(handle, 3)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!pwd"))
    third = await _next_pending(handle, second)
    await _decide(handle, third, True, grant="session_prefix")
    await _idle(handle, 4)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!pwd"))
    await _idle(handle, 5)


async def autogen(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """`Agent:demo-autogen`: a delete denied with a reason, asked again and approved."""
    interaction = await _pending_id(handle)
    denial = decided(interaction_id=interaction, approved=False, principal="bob", user_message="not today")
    await handle.execute_update(SessionWorkflow.decide_checked, denial)
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=DELETE, sender_id="alice"))
    second = await _next_pending(handle, interaction)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=second, approved=True, principal="bob"),
    )
    await _idle(handle, 2)


async def _end(handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Cancel the session, unless it has ended on its own."""
    if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
        await handle.execute_update(SessionWorkflow.cancel_checked, SessionControl(reason="recorded"))


FollowedScenario = Callable[[Client, WorkflowHandle[SessionWorkflow, LiveSession], Follower], Awaitable[None]]


def followed(scenario: FollowedScenario) -> Scenario:
    """A scenario whose stream a watcher follows from its first event to its last (`Follower`),
    so that every event the session publishes is in its history: it ends the session itself."""

    async def run(client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
        follower = Follower(handle)
        await scenario(client, handle, follower)
        await _end(handle)
        await follower.done()

    return run


TERMINAL_IDLE_SECONDS = 10.0
"""A command silent this long gets Ctrl-C (`session_followed`'s `sleep 15`); the other scenarios'
commands print, wait at a prompt or are cancelled well before."""
AGENT_CLI = Path(__file__).resolve().parents[1] / "fakes" / "agent_cli.py"
"""An agent CLI in Amazon Q's style: its marked prompt, `Thinking...` and `Using tool:` lines."""
TWO_FOR_THE_TERMINAL = DecisionPolicy(approvals_required=2, escalate_to=["dave"], escalate_after_seconds=1)


async def _two_approve(handle: WorkflowHandle[SessionWorkflow, LiveSession], interaction: str) -> None:
    """bob approves (1 of 2); once the request has escalated, dave approves second."""
    await _decide(handle, interaction, True)
    await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: bool(s.pending_interactions) and s.pending_interactions[0].escalated,
    )
    await handle.execute_update(
        SessionWorkflow.decide_checked, decided(interaction_id=interaction, approved=True, principal="dave")
    )


async def every_session_event(
    _client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession], follower: Follower
) -> None:
    """Every kind of event a session publishes, followed by a watcher: the DELETE, an operator's
    chat reply refused, approved with a `session_prefix` grant; a DELETE run by the grant, which is
    revoked; pause and resume; a question answered; `ask_user` without a question, refused; an
    agent CLI run under the two-person rule (escalated to dave) to its marked prompt, asked a
    question (thinking, a tool used), quit; a command cancelled with its turn while it runs; a
    silent one interrupted; a plan run as a child graph; the session cancelled."""
    asked = await _pending_id(handle)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="确认", sender_id="otto", role=Role.operator)
    )
    await follower.seen("reply_refused")
    await _decide(handle, asked, True, grant="session_prefix")
    await follower.seen("turn_completed", 1)
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="DELETE FROM orders WHERE id = 4")
    )
    await follower.seen("turn_completed", 2)
    await handle.execute_update(
        SessionWorkflow.revoke_grant, GrantRevocation(grant_id="grant_1", principal="carol")
    )
    await handle.execute_update(SessionWorkflow.pause_checked, SessionControl(reason="check"))
    await handle.execute_update(SessionWorkflow.resume_checked, SessionControl())
    await handle.signal(
        SessionWorkflow.submit_message, InboundMessage(content="ask: Which table?", sender_id="bob")
    )
    asked = await _next_pending(handle, asked)
    await _decide(handle, asked, True, text="orders")
    await follower.seen("turn_completed", 3)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="use: ask_user {}"))
    await follower.seen("turn_completed", 4)
    for turn, command in enumerate((f"{sys.executable} {AGENT_CLI}", "what is here", "/quit"), start=5):
        await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=f"!{command}"))
        asked = await _next_pending(handle, asked)
        await _two_approve(handle, asked)
        await follower.seen("turn_completed", turn)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!echo started && sleep 30"))
    asked = await _next_pending(handle, asked)
    await _decide(handle, asked, True)
    await _cancelled_while_it_runs(handle, asked, "dave")
    await follower.seen("turn_cancelled")
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="!sleep 15"))
    asked = await _next_pending(handle, asked)
    await _two_approve(handle, asked)  # silent for TERMINAL_IDLE_SECONDS: interrupted, failed
    await follower.seen("command_failed")
    plan = {"new_tasks": [{"task_id": "count", "assignee_id": "Agent:demo", "input_data": {"echo": 3}}]}
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="plan: " + json.dumps(plan)))
    await follower.seen("turn_completed", 9)


async def ended_by_itself(
    _client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession], follower: Follower
) -> None:
    """One agent step a turn: the DELETE approved runs, and the turn fails at its step limit; the
    webhook's address is refused (each notification's delivery fails); idle, the session ends."""
    await _decide(handle, await _pending_id(handle), True)
    await follower.seen("turn_failed")
    await follower.seen("delivery_failed", 2)
    await follower.seen("session_ended")


async def _running_activities(handle: WorkflowHandle[Any, Any]) -> list[str]:
    described = await handle.describe()
    return [a.activity_type.name for a in described.raw_description.pending_activities]


def scenarios(fake: FakeChatCompletions, hook_url: str = "") -> dict[str, tuple[SessionConfig, Scenario]]:
    """Every recorded scenario; `fake` is the OpenAI-compatible stand-in the batch agent talks to,
    `hook_url` a webhook receiver."""
    remote = AgentSpec(name="remote", framework="langgraph", model="fake-model", base_url=fake.base_url)
    return {
        "session_approved": (SessionConfig(session_key="history-approved"), approved),
        "session_denied": (SessionConfig(session_key="history-denied"), denied),
        "session_refused": (SessionConfig(session_key="history-refused"), refused),
        "session_relayed": (SessionConfig(session_key="history-relayed"), relayed),
        "session_autogen": (
            SessionConfig(
                session_key="history-autogen",
                agent_id="Agent:demo-autogen",
                agent=BUILTIN_AGENTS["demo-autogen"],
            ),
            autogen,
        ),
        "session_timed_out": (
            SessionConfig(session_key="history-timeout", approval_timeout_seconds=1),
            timed_out,
        ),
        "session_dingtalk_chat": (DINGTALK_CHAT, dingtalk_chat),
        "session_lark_chat": (
            SessionConfig(
                session_key="lark:oc_history",
                channel="lark",
                chat_id="oc_history",
                approve_by_requester=True,
            ),
            lark_chat,
        ),
        "session_tool_batch": (
            SessionConfig(session_key="history-batch", agent_id="Agent:remote", agent=remote),
            batch,
        ),
        "session_watched": (SessionConfig(session_key="history-watched"), watched),
        "session_not_a_reply": (SessionConfig(session_key="history-not-a-reply"), not_a_reply),
        "session_artifact": (SessionConfig(session_key="history-artifact"), artifact),
        "session_granted": (SessionConfig(session_key="history-granted"), granted),
        "session_edited": (SessionConfig(session_key="history-edited"), edited),
        "session_questioned": (SessionConfig(session_key="history-questioned"), questioned),
        "session_turn_cancelled": (SessionConfig(session_key="history-turn-cancelled"), turn_cancelled),
        "session_terminal": (
            SessionConfig(session_key="history-terminal", agent=BUILTIN_AGENTS["demo"]),
            terminal,
        ),
        "session_terminal_cancelled": (
            SessionConfig(session_key="history-terminal-cancelled", agent=BUILTIN_AGENTS["demo"]),
            terminal_cancelled,
        ),
        "session_sandboxed": (
            SessionConfig(
                session_key="history-sandboxed",
                agent=BUILTIN_AGENTS["demo"],
                sandbox=SandboxProfile.READ_ONLY,
            ),
            sandboxed,
        ),
        "session_notified": (
            SessionConfig(session_key="history-notified", notify_url=hook_url or None),
            approved,
        ),
        "session_lark_escalated": (
            SessionConfig(
                session_key="lark:oc_history_escalated",
                channel="lark",
                chat_id="oc_history_escalated",
                approvers=["lark:ou_alice"],
                policies={"sql": DecisionPolicy(escalate_to=["lark:ou_dave"], escalate_after_seconds=1)},
            ),
            lark_escalated,
        ),
        "session_ruled": (
            SessionConfig(session_key="history-ruled", project=RULED_PROJECT, user="alice"),
            ruled,
        ),
        "session_rule_not_maker": (
            SessionConfig(
                session_key="history-rule-not-maker", project=RULED_PROJECT, user="alice", approvers=["bob"]
            ),
            rule_not_maker,
        ),
        "session_elicited": (
            SessionConfig(session_key="history-elicited", agent_id="Agent:scribe", agent=SCRIBE),
            elicited,
        ),
        "session_planned": (SessionConfig(session_key="history-planned"), planned),
        "session_followed": (
            SessionConfig(
                session_key="history-followed",
                agent=BUILTIN_AGENTS["demo"],
                sandbox=SandboxProfile.FULL,
                policies={"terminal": TWO_FOR_THE_TERMINAL},
            ),
            followed(every_session_event),
        ),
        "session_ended": (
            SessionConfig(
                session_key="history-ended",
                max_turns=1,
                idle_timeout_seconds=3,
                notify_url="http://10.255.0.1/hook",  # private: refused, not retried
            ),
            followed(ended_by_itself),
        ),
        "session_two_people": (
            SessionConfig(
                session_key="history-two-people",
                approvers=["bob"],
                policies={
                    "sql": DecisionPolicy(
                        approvals_required=2, escalate_to=["dave"], escalate_after_seconds=1
                    )
                },
            ),
            two_people,
        ),
    }


NOTES_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
SCRIBE = AgentSpec(name="scribe", framework="demo", tools=["sql", "mcp__notes__*"])


def mcp_declarations(folder: Path) -> str:
    """The agents file the recording worker reads: the notes MCP server (`tests/fakes/mcp_server.py`)."""
    env = f'{{NOTES_FILE = "{folder / "notes.txt"}", PID_FILE = "{folder / "server.pid"}"}}'
    return f'[mcp_servers.notes]\ncommand = "{sys.executable}"\nargs = ["{NOTES_SERVER}"]\nenv = {env}\n'


async def _pending_of(handle: WorkflowHandle[SessionWorkflow, LiveSession], kind: str) -> str:
    status = await assert_eventually(
        lambda: handle.query(SessionWorkflow.get_status),
        lambda s: any(p.interaction_type == kind for p in s.pending_interactions),
    )
    return next(p.interaction_id for p in status.pending_interactions if p.interaction_type == kind)


async def elicited(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """The DELETE denied, then an MCP tool approved (by signal: its update would wait for the
    tool), whose server asks the person's name mid-call; answered, the tool greets them."""
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=await _pending_id(handle), approved=False, principal="bob"),
    )
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content="use: mcp__notes__greet {}"))
    approval = await _pending_of(handle, "tool_approval")
    await handle.signal(
        SessionWorkflow.decide, decided(interaction_id=approval, approved=True, principal="bob")
    )
    question = await _pending_of(handle, "user_input")
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=question, approved=True, principal="alice", response_data={"text": "Alice"}),
    )
    await _idle(handle, 2)


RULED_PROJECT = "/shop"
RULES = [
    NewRule(
        tool="sql",
        decision=RuleDecision.DENY,
        match=RuleMatch(sql_kind="DELETE", sql_table="orders"),
        scope=RuleScope.PROJECT,
        project=RULED_PROJECT,
        reason="orders are kept",
    ),
    NewRule(
        tool="sql",
        decision=RuleDecision.ALLOW,
        match=RuleMatch(sql_kind="UPDATE", sql_table="orders"),
        scope=RuleScope.PROJECT,
        project=RULED_PROJECT,
    ),
]
"""The project's rules `session_ruled` is recorded with (saved before its first message)."""


async def ruled(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """The DELETE is refused by a rule, then an UPDATE runs as another allows, nobody asked."""
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message,
        InboundMessage(content="UPDATE orders SET status = 'shipped' WHERE id = 1", sender_id="alice"),
    )
    await _idle(handle, 2)


async def rule_not_maker(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """The DELETE is refused by a rule; the UPDATE a rule allows is asked all the same, as its maker
    is not among the session's approvers, and bob approves it."""
    await _idle(handle, 1)
    await handle.signal(
        SessionWorkflow.submit_message,
        InboundMessage(content="UPDATE orders SET status = 'shipped' WHERE id = 1", sender_id="alice"),
    )
    await _decide(handle, await _pending_id(handle), True)
    await _idle(handle, 2)


BIG_SELECT = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) "
    "SELECT i, printf('%.100c', 'r') AS filler FROM n"
)


async def artifact(_client: Client, handle: WorkflowHandle[SessionWorkflow, LiveSession]) -> None:
    """Delete denied, then a SELECT too large to carry: history holds a preview and its artifact id;
    both turns are indexed for recall and the conversation is trimmed after each."""
    interaction = await _pending_id(handle)
    await handle.execute_update(
        SessionWorkflow.decide_checked,
        decided(interaction_id=interaction, approved=False, principal="bob"),
    )
    await _idle(handle, 1)
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=BIG_SELECT))
    await _idle(handle, 2)


BATCH_REPLY = [
    ("call_a", "sql", '{"sql": "DELETE FROM orders WHERE id = 2"}'),
    ("call_b", "sql", '{"sql": "SELECT customer FROM orders WHERE id = 3"}'),
]


async def record_all(
    env: WorkflowEnvironment,
    settings: Settings,
    fake: FakeChatCompletions,
    tag: str,
    only: list[str],
    hook_url: str = "",
) -> None:
    """Run every scenario (or those in `only`) once with a worker; write the histories not recorded yet."""
    store = RuleStore.at(settings.rules_url, settings.data_dir)
    for rule in RULES:
        store.add(rule)
    async with build_worker(env.client, settings):
        fake.enqueue(fake.tool_calls(BATCH_REPLY))
        for name, (config, scenario) in scenarios(fake, hook_url).items():
            if only and name not in only:
                continue
            path = HERE / f"{name}.{tag}.json"
            if path.exists():
                print(f"kept {path.name} (histories are never overwritten)")  # noqa: T201
                continue
            first = InboundMessage(content=DELETE, sender_id="alice", chat_id=config.session_key)
            await session_calls.send_message(env.client, settings.temporal.task_queue, config, first)
            handle: WorkflowHandle[SessionWorkflow, LiveSession] = env.client.get_workflow_handle(
                session_workflow_id(config.session_key)
            )
            await scenario(env.client, handle)
            await _end(handle)
            await handle.result()  # deliveries drained, the run closed: a complete history
            write_history(path, await handle.fetch_history())


GraphScenario = Callable[[Client, WorkflowHandle[Any, Any]], Awaitable[str | None]]
"""Drives a graph; may name one of its task runs whose history to record too."""


def _graph_task(task_id: str, **extra: Any) -> dict[str, Any]:
    extra.setdefault("input_data", {"echo": task_id})
    return {"task_id": task_id, "assignee_id": "Agent:demo", **extra}


ROLLBACK_BLUEPRINT = {
    "new_tasks": [
        _graph_task("extract", input_data={"echo": {"limit": 10, "sleep": 30}}),
        _graph_task("transform", input_data={}),
        _graph_task("load", input_data={}),
    ],
    "new_edges": [
        {
            "source_task_id": "extract",
            "target_task_id": "transform",
            "data_flow": {"mappings": {"limit": "output.limit", "sleep_seconds": "output.sleep"}},
        },
        {"source_task_id": "transform", "target_task_id": "load"},
    ],
}
GATED_BLUEPRINT = {
    "new_tasks": [
        _graph_task("deploy", directives={"human_interaction": {"prompt": "Deploy?"}}),
        _graph_task("drop", directives={"human_interaction": {"prompt": "Drop?"}}),
        _graph_task("clean", input_data={"sql": DELETE}),
    ],
    "new_edges": [{"source_task_id": "deploy", "target_task_id": "clean"}],
}


async def _graph_view(handle: WorkflowHandle[Any, Any], check: Callable[[GraphView], bool]) -> GraphView:
    return await assert_eventually(
        lambda: handle.query(TaskGraphWorkflow.get_state, GraphQuery(limit=100)), check, within=30
    )


async def rolled_back(_client: Client, handle: WorkflowHandle[Any, Any]) -> str | None:
    """Extract → transform (running) → load; extract rolled back with new input while transform runs."""
    view = await _graph_view(
        handle, lambda v: any(t.task_id == "transform" and t.status == "running" for t in v.tasks)
    )
    extract = next(t for t in view.tasks if t.task_id == "extract")
    await handle.execute_update(
        TaskGraphWorkflow.intervene_checked,
        GraphIntervention(
            intervention_type="ROLLBACK_AND_MODIFY",
            target_task_uuid=extract.task_uuid,
            rollback_to_version=1,
            new_input_data={"echo": {"limit": 99, "sleep": 0}},
            comment="recorded",
            principal="olga",
        ),
    )
    return None


async def gated(client: Client, handle: WorkflowHandle[Any, Any]) -> str | None:
    """Two gates (one approved, one denied), then a DELETE in a task approved on its task run."""
    view = await _graph_view(handle, lambda v: len(v.pending_interactions) == 2)
    for request in view.pending_interactions:
        approved = request.content["task_id"] == "deploy"  # type: ignore[index]
        await handle.execute_update(
            TaskGraphWorkflow.decide_checked,
            decided(interaction_id=request.interaction_id, approved=approved, principal="bob"),
        )
    view = await _graph_view(
        handle, lambda v: any(r.interaction_type == "tool_approval" for r in v.pending_interactions)
    )
    request = view.pending_interactions[0]
    await client.get_workflow_handle(request.workflow_id).execute_update(
        AgentTaskWorkflow.decide_checked,
        decided(interaction_id=request.interaction_id, approved=True, principal="bob"),
    )
    return request.workflow_id


RETRY_BLUEPRINT = {
    "new_tasks": [
        _graph_task("fetch", input_data={}, directives={"human_interaction": {"prompt": "Fetch?"}}),
        _graph_task(
            "process",
            input_data={"echo": "processed"},
            directives={"on_failure": {"type": "GOTO", "target_task_id": "fetch"}},
        ),
    ],
    "new_edges": [
        {
            "source_task_id": "fetch",
            "target_task_id": "process",
            "data_flow": {"mappings": {"attempt": "output.failure.attempt"}},
        }
    ],
}


async def retried(_client: Client, handle: WorkflowHandle[Any, Any]) -> str | None:
    """The retry loop: fetch's gate approved, process fails (no failure to read yet) and goes back
    to fetch, whose gate asks again; approved, process succeeds."""
    for _ in range(2):
        view = await _graph_view(handle, lambda v: len(v.pending_interactions) == 1)
        await handle.execute_update(
            TaskGraphWorkflow.decide_checked,
            decided(
                interaction_id=view.pending_interactions[0].interaction_id, approved=True, principal="bob"
            ),
        )
        await _graph_view(handle, lambda v: not v.pending_interactions)
    return None


def _loop(task_id: str, source: str, template: dict[str, Any], key: str = "echo") -> dict[str, Any]:
    loop = {"type": "PARALLEL_ITERATION", "iteration_input_key": key, "input_source_task_id": source}
    return _graph_task(
        task_id, input_data={}, directives={"loop_directive": {**loop, "task_template": template}}
    )


CANCELLED_BLUEPRINT = {
    "new_tasks": [
        _graph_task("items", input_data={"echo": [1, 2]}),
        _loop("each", "items", _graph_task("wait", input_data={"sleep_seconds": 60})),
        _graph_task("deploy", directives={"human_interaction": {"prompt": "Deploy?"}}),
    ],
    "new_edges": [{"source_task_id": "items", "target_task_id": "each"}],
}


async def cancelled(_client: Client, handle: WorkflowHandle[Any, Any]) -> str | None:
    """The graph cancelled while its loop's instances run and a gate waits: each is ended, announced."""
    await _graph_view(
        handle,
        lambda v: (
            any(t.task_id == "each" and t.status == "running" for t in v.tasks)
            and bool(v.pending_interactions)
        ),
    )
    await handle.execute_update(
        TaskGraphWorkflow.cancel_checked, SessionControl(reason="recorded", principal="olga")
    )
    return None


PAGES = [f"page {n}: " + "x" * 20_000 for n in range(2)]
PAGES_BLUEPRINT = {
    "new_tasks": [
        _graph_task("pages", input_data={"echo": PAGES}),
        _loop("each", "pages", _graph_task("copy", input_data={})),
        _graph_task("report", input_data={}),
    ],
    "new_edges": [
        {"source_task_id": "pages", "target_task_id": "each"},
        {
            "source_task_id": "each",
            "target_task_id": "report",
            "data_flow": {"mappings": {"last": "output[1]"}},
        },
    ],
}
"""A loop whose instances answer past the inline limit: what follows reads their answers whole."""


async def paged(_client: Client, _handle: WorkflowHandle[Any, Any]) -> str | None:
    return None


HANDED_OVER_BLUEPRINT = {
    "new_tasks": [_graph_task(f"slow{n}", input_data={"echo": n, "sleep_seconds": 3}) for n in range(3)],
    "new_edges": [],
}
"""Three runs in flight when the graph continues as new (`CAS_AFTER`): told to report to its next run."""
CAS_AFTER = {"graph_handed_over": 10}
"""History events after which a scenario's graph continues as new (`GRAPH_EVENTS` otherwise)."""


async def handed_over(_client: Client, _handle: WorkflowHandle[Any, Any]) -> str | None:
    return None


BIG_INPUT = "y" * 20_000
BY_REFERENCE_BLUEPRINT = {"new_tasks": [_graph_task("big", input_data={"echo": BIG_INPUT})], "new_edges": []}
"""A task whose input is over the graph's inline size: kept in the artifact store, read back by its run."""


async def by_reference(_client: Client, handle: WorkflowHandle[Any, Any]) -> str | None:
    view = await _graph_view(handle, lambda v: v.status == "completed")
    big = next(t for t in view.tasks if t.task_id == "big")
    return task_run_workflow_id(handle.id, big.task_uuid, 1)


WIDE_BLUEPRINT = {
    "new_tasks": [
        _graph_task("root", input_data={"echo": {"page": "z" * 14_000}}),
        *(_graph_task(f"leaf{n}") for n in range(80)),
    ],
    "new_edges": [
        {
            "source_task_id": "root",
            "target_task_id": f"leaf{n}",
            "data_flow": {"mappings": {"page": "output.page"}},
        }
        for n in range(80)
    ],
}
"""80 starts of 14 KB each, carried whole: more than one workflow task may carry (25 in flight, 1 MiB);
each answers its name, so the whole graph's result stays under a payload's 2 MiB (the recorder
has no claim check)."""


async def wide(_client: Client, _handle: WorkflowHandle[Any, Any]) -> str | None:
    return None


FOLLOWED_BLUEPRINT = {
    "new_tasks": [
        _graph_task("first", input_data={"echo": {"n": 1}}),
        _graph_task("second", input_data={}),
        _graph_task("gate", directives={"human_interaction": {"prompt": "Go on?"}}),
        _graph_task("slow", input_data={"echo": "slow", "sleep_seconds": 8}),
        _graph_task("planner", input_data={"plan": {"new_tasks": [_graph_task("extra")]}}),
        _graph_task(
            "misplanner",
            input_data={"plan": {"new_tasks": [_graph_task("ghost", assignee_id="Agent:nobody")]}},
        ),
    ],
    "new_edges": [
        {"source_task_id": "first", "target_task_id": "second", "data_flow": {"mappings": {"n": "output.n"}}}
    ],
}


def _intervention(kind: str, task_uuid: str, **extra: Any) -> GraphIntervention:
    return GraphIntervention.model_validate(
        {
            "intervention_type": kind,
            "target_task_uuid": task_uuid,
            "comment": "recorded",
            "principal": "olga",
            **extra,
        }
    )


async def every_graph_event(_client: Client, handle: WorkflowHandle[Any, Any], _f: Follower) -> None:
    """Every kind of event a graph publishes, followed by a watcher: a gate approved; a running
    task paused and resumed; a task's plan extends the graph, another's is refused (its assignee
    is unknown); `first` rolled back with new input once `second` has read it; finished."""
    view = await _graph_view(handle, lambda v: len(v.pending_interactions) == 1)
    await handle.execute_update(
        TaskGraphWorkflow.decide_checked,
        decided(interaction_id=view.pending_interactions[0].interaction_id, approved=True, principal="bob"),
    )
    view = await _graph_view(
        handle, lambda v: any(t.task_id == "slow" and t.status == "running" for t in v.tasks)
    )
    slow = next(t for t in view.tasks if t.task_id == "slow").task_uuid
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, _intervention("PAUSE", slow))
    await handle.execute_update(TaskGraphWorkflow.intervene_checked, _intervention("RESUME", slow))
    view = await _graph_view(
        handle, lambda v: any(t.task_id == "second" and t.status == "completed" for t in v.tasks)
    )
    first = next(t for t in view.tasks if t.task_id == "first").task_uuid
    await handle.execute_update(
        TaskGraphWorkflow.intervene_checked,
        _intervention("ROLLBACK_AND_MODIFY", first, rollback_to_version=1, new_input_data={"echo": {"n": 2}}),
    )


async def refused_at_once(_client: Client, _handle: WorkflowHandle[Any, Any], _f: Follower) -> None:
    """The first blueprint names an unknown assignee: the graph is refused and ends in its first
    workflow tasks (the follower's first watch came with its start)."""


REFUSED_BLUEPRINT = {"new_tasks": [_graph_task("ghost", assignee_id="Agent:nobody")], "new_edges": []}
WAITING_BLUEPRINT = {"new_tasks": [_graph_task("wait", input_data={"sleep_seconds": 60})], "new_edges": []}


async def cancelled_while_followed(_client: Client, handle: WorkflowHandle[Any, Any], _f: Follower) -> None:
    """A task runs; the graph is cancelled: the task's end and the graph's are announced.

    They are published in one workflow task, which also closes the run: a second watcher, waiting
    for the second of them, is still there to carry it (the follower's watch answers the first)."""
    await _graph_view(handle, lambda v: any(t.status == "running" for t in v.tasks))
    now = await handle.execute_update(TaskGraphWorkflow.watch, WatchRequest(next_offset=0))
    last = await handle.start_update(
        TaskGraphWorkflow.watch,
        WatchRequest(next_offset=now.next_offset + 1),
        wait_for_stage=WorkflowUpdateStage.ACCEPTED,
    )
    await handle.execute_update(
        TaskGraphWorkflow.cancel_checked, SessionControl(reason="recorded", principal="olga")
    )
    await last.result()


FollowedGraphScenario = Callable[[Client, WorkflowHandle[Any, Any], Follower], Awaitable[None]]
"""Drives a graph whose stream a watcher follows from its start to its end (`Follower`)."""


CONFIGS = {"graph_inputs_by_reference": {"inline_input_bytes": 16_384}}
"""Graph settings a scenario starts with (beyond its id and requester)."""
GRAPH_SCENARIOS: dict[str, tuple[dict[str, Any], GraphScenario]] = {
    "graph_rollback": (ROLLBACK_BLUEPRINT, rolled_back),
    "graph_gated": (GATED_BLUEPRINT, gated),
    "graph_retry": (RETRY_BLUEPRINT, retried),
    "graph_cancelled": (CANCELLED_BLUEPRINT, cancelled),
    "graph_loop_pages": (PAGES_BLUEPRINT, paged),
    "graph_handed_over": (HANDED_OVER_BLUEPRINT, handed_over),
    "graph_inputs_by_reference": (BY_REFERENCE_BLUEPRINT, by_reference),
    "graph_wide_starts": (WIDE_BLUEPRINT, wide),
}
FOLLOWED_GRAPHS: dict[str, tuple[dict[str, Any], FollowedGraphScenario]] = {
    "graph_followed": (FOLLOWED_BLUEPRINT, every_graph_event),
    "graph_refused": (REFUSED_BLUEPRINT, refused_at_once),
    "graph_followed_cancelled": (WAITING_BLUEPRINT, cancelled_while_followed),
}


def write_history(path: Path, history: WorkflowHistory) -> None:
    """Write a history, and its workflow id to `WORKFLOW_IDS` (a graph's child ids derive from it)."""
    path.write_text(history.to_json())
    ids = json.loads(WORKFLOW_IDS.read_text()) if WORKFLOW_IDS.exists() else {}
    ids[path.stem] = history.workflow_id
    WORKFLOW_IDS.write_text(json.dumps(ids, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path.name} ({len(history.events)} events)")  # noqa: T201


async def record_graphs(env: WorkflowEnvironment, settings: Settings, tag: str, only: list[str]) -> None:
    """Run each graph scenario once; write the graph's history (and one task run's, when named)."""
    async with build_worker(env.client, settings):
        for name in [*GRAPH_SCENARIOS, *FOLLOWED_GRAPHS]:
            path = HERE / f"{name}.{tag}.json"
            if (only and name not in only) or path.exists():
                continue
            blueprint = (GRAPH_SCENARIOS.get(name) or FOLLOWED_GRAPHS[name])[0]
            graph_id = str(uuid.uuid4())
            run_input = GraphRunInput(
                config=GraphConfig(graph_id=graph_id, requested_by="alice", **CONFIGS.get(name, {})),
                blueprint=PlanBlueprint.model_validate(blueprint),
                continue_as_new_after_events=CAS_AFTER.get(name, GRAPH_EVENTS),
                generation=GENERATION,  # as the API starts graphs
            )
            options: dict[str, Any] = {
                "id": graph_workflow_id(graph_id),
                "task_queue": settings.temporal.task_queue,
                "task_timeout": GRAPH_TASK_TIMEOUT,
            }
            task_run = None
            if name in FOLLOWED_GRAPHS:  # its first watch comes with its start
                start = WithStartWorkflowOperation(
                    TaskGraphWorkflow.run,
                    run_input,
                    id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
                    **options,
                )
                watch = await env.client.start_update_with_start_workflow(
                    TaskGraphWorkflow.watch,
                    WatchRequest(next_offset=0),
                    start_workflow_operation=start,
                    wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                )
                handle = await start.workflow_handle()
                follower = Follower(handle, watch)
                await FOLLOWED_GRAPHS[name][1](env.client, handle, follower)
                await follower.done()
            else:
                handle = await env.client.start_workflow(TaskGraphWorkflow.run, run_input, **options)
                task_run = await GRAPH_SCENARIOS[name][1](env.client, handle)
            await handle.result()
            first = env.client.get_workflow_handle(handle.id, run_id=handle.first_execution_run_id)
            write_history(path, await first.fetch_history())  # a run that continued as new, too
            if task_run is not None:
                run_path = HERE / f"{name}_task_run.{tag}.json"
                write_history(run_path, await env.client.get_workflow_handle(task_run).fetch_history())


RESTARTED = "session_terminal_restarted"
"""Recorded with workers of its own (`record_restarted`): one of them goes away mid-session."""
RESTARTED_QUEUE = "history-restarted"
CD_ROOT = "!cd / && pwd"
"""A command that is asked for (it leaves the trusted folder) and prints where the terminal is."""


async def _command(
    handle: WorkflowHandle[SessionWorkflow, LiveSession], follower: Follower, after: str, turns: int
) -> str:
    """Send `CD_ROOT`, approve it, wait for the end of the session's `turns`-th turn; its request."""
    await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=CD_ROOT))
    asked = await _next_pending(handle, after)
    await _decide(handle, asked, True)
    await follower.seen("turn_completed", turns)
    return asked


async def record_restarted(env: WorkflowEnvironment, settings: Settings, tag: str) -> None:
    """The worker holding a session's terminal goes away while idle: the next command waits for it
    in vain (lost: it did not run), and the one after starts a fresh terminal (`tool_restarted`).

    Its own task queue and workers, each waiting only 3 s for the worker that holds the terminal."""
    path = HERE / f"{RESTARTED}.{tag}.json"
    if path.exists():
        print(f"kept {path.name} (histories are never overwritten)")  # noqa: T201
        return
    quick = settings.model_copy(
        update={"tools": settings.tools.model_copy(update={"terminal_worker_wait_seconds": 3.0})}
    )
    config = SessionConfig(
        session_key="history-terminal-restarted", agent=BUILTIN_AGENTS["demo"], sandbox=SandboxProfile.FULL
    )
    handle: WorkflowHandle[SessionWorkflow, LiveSession] = env.client.get_workflow_handle(
        session_workflow_id(config.session_key)
    )
    async with build_worker(env.client, quick, task_queue=RESTARTED_QUEUE):
        first = InboundMessage(content=DELETE, sender_id="alice")
        await session_calls.send_message(env.client, RESTARTED_QUEUE, config, first)
        follower = Follower(handle)
        asked = await _pending_id(handle)
        await _decide(handle, asked, False)
        asked = await _command(handle, follower, asked, 2)  # the terminal is this worker's now
    async with build_worker(env.client, quick, task_queue=RESTARTED_QUEUE):
        asked = await _command(handle, follower, asked, 3)  # sent to the gone worker: lost
        await _command(handle, follower, asked, 4)  # a fresh terminal here
        await _end(handle)
        await handle.result()
        await follower.done()
        write_history(path, await handle.fetch_history())


CONTINUED = "session_continued"
"""Recorded by `record_continued`: the first run of a session past its history threshold."""
CONTINUED_AFTER_EVENTS = 10
"""Fewer events than one approved turn leaves: the first turn's end continues as new."""


async def record_continued(env: WorkflowEnvironment, settings: Settings, tag: str) -> None:
    """A session (its agent by reference) started with a history threshold of 10 events: the DELETE
    is approved with a grant, and the turn's end continues as new; the first run is recorded."""
    path = HERE / f"{CONTINUED}.{tag}.json"
    if path.exists():
        print(f"kept {path.name} (histories are never overwritten)")  # noqa: T201
        return
    config = session_calls.new_config(settings, "history-continued", BUILTIN_AGENTS["demo"])
    run = SessionRunInput(
        config=config, generation=GENERATION, history_events_before_continue_as_new=CONTINUED_AFTER_EVENTS
    )
    async with build_worker(env.client, settings):
        handle = await env.client.start_workflow(
            SessionWorkflow.run,
            run,
            id=session_workflow_id(config.session_key),
            task_queue=settings.temporal.task_queue,
        )
        first_run = handle.first_execution_run_id
        await handle.signal(SessionWorkflow.submit_message, InboundMessage(content=DELETE, sender_id="alice"))
        await _decide(handle, await _pending_id(handle), True, grant="session_prefix")
        latest = env.client.get_workflow_handle(session_workflow_id(config.session_key))
        await assert_eventually(latest.describe, lambda d: d.run_id != first_run, what="the next run")
        await _end(latest)
        await latest.result()
        first = env.client.get_workflow_handle(session_workflow_id(config.session_key), run_id=first_run)
        write_history(path, await first.fetch_history())


async def main(tag: str, only: list[str]) -> None:
    """Run each scenario on a fresh dev server and write `<scenario>.<tag>.json` next to this file."""
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        search_attributes=list(SEARCH_ATTRIBUTES),
        data_converter=pydantic_data_converter,
    )
    try:
        with tempfile.TemporaryDirectory() as data_dir:
            async with (
                fake_chat_completions() as fake,
                lark_open_api() as lark,
                dingtalk_open_api() as dingtalk,
                webhook_receiver() as hook,
            ):
                agents = Path(data_dir) / "agents.toml"
                agents.write_text(mcp_declarations(Path(data_dir)))
                settings = Settings(
                    data_dir=Path(data_dir),
                    agents_file=agents,
                    temporal=TemporalSettings(task_queue="history"),
                    lark=LarkSettings(app_id=lark.app_id, app_secret=lark.app_secret, domain=lark.base_url),
                    dingtalk=DingTalkSettings(
                        client_id=dingtalk.client_id,
                        client_secret=dingtalk.client_secret,
                        openapi_endpoint=dingtalk.base_url,
                        card_template_id="tpl-history",
                    ),
                    # the receiver is on loopback
                    webhooks=WebhookSettings(secret="history", allow="127.0.0.1"),
                    tools=ToolSettings(terminal_idle_seconds=TERMINAL_IDLE_SECONDS),
                    _env_file=None,
                )
                graphs = {*GRAPH_SCENARIOS, *FOLLOWED_GRAPHS}
                sessions = [
                    name for name in only if name not in graphs and name not in (RESTARTED, CONTINUED)
                ]
                if sessions or not only:
                    await record_all(env, settings, fake, tag, sessions, hook.url)
                await record_graphs(env, settings, tag, only)
                if RESTARTED in only or not only:
                    await record_restarted(env, settings, tag)
                if CONTINUED in only or not only:
                    await record_continued(env, settings, tag)
    finally:
        await env.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tag", help="names the code version recorded: `v1` for 1.0, else the change's id")
    parser.add_argument("only", nargs="*", help="scenarios to record (default: all), e.g. session_watched")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.tag, arguments.only))
