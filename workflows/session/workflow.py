"""SessionWorkflow: one interactive conversation with one agent (its `LiveSession` is what people see).

Started by signal-with-start on the first message (`session:<key>`). Messages queue in the
state's inbox and are answered one at a time by the shared agent loop; tool calls that need
approval wait durably for a person (HTTP, chat keyword, card button), a cancel, or the
approval timeout, which denies as `system:timeout`. Every decision and intervention is in
the audit trail. The session completes after `idle_timeout_seconds` without messages, and
continues-as-new (carrying state and stream) when the server suggests it.

Determinism: no I/O, time from `workflow.now()`. A change that alters the commands this
workflow issues must be gated (`workflows/versioning`); `tests/histories/` replays recorded
runs on every test run to prove running workflows still replay.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        ArchiveCursor,
        AuditTrail,
        GraphProgress,
        InboundMessage,
        InteractionRequest,
        LiveSession,
        MessagesQuery,
        MessageWindow,
        RuleContext,
        SessionCancelled,
        SessionControl,
        SessionEnded,
        SessionStatus,
        TurnStarted,
        UniversalMessage,
    )

    from .state import SEEN_MESSAGE_IDS_KEPT, SessionRunInput, SessionState

from ..agent.experience import remember
from ..agent.handlers import AgentRunHandlers
from ..agent.loop import run_agent_loop
from ..agent.supervised import SupervisedHost
from ..identity import search_attributes
from ..identity.ids import session_key_of
from ..stream.chunks import Publish
from ..supervision.handlers import ControlHandlers, StreamHandlers, SupervisionHandlers
from ..supervision.ports import Channel, Channels, Policy
from ..supervision.supervisor import supervise
from ..versioning import GENERATION
from . import bounds
from . import view as session_view
from .graphs import SessionGraphs
from .notifier import WebhookNotifier
from .outbox import ChannelOutbox
from .turn import Turn
from .turn_end import experience_of, to_remember, told

NOTICES_AT_CLOSE = timedelta(seconds=30)
"""How long a closing session lets queued webhook notifications go out (they retry for minutes)."""


def _message_metadata(message: InboundMessage) -> dict[str, Any]:
    """What the conversation keeps of a message's metadata: its channel, its id (a client that sends
    its whole conversation again, AG-UI's, finds which messages the session has) and attached
    artifacts. Data only: no command changes, so histories replay as they were recorded."""
    metadata: dict[str, Any] = {"channel": message.channel}
    if message.message_id:
        metadata["message_id"] = message.message_id
    if message.metadata.get("artifacts"):
        metadata["artifacts"] = message.metadata["artifacts"]
    return metadata


@workflow.defn
class SessionWorkflow(SupervisionHandlers, AgentRunHandlers, ControlHandlers, StreamHandlers):
    """An interactive session: messages in, supervised agent turns, chunks out."""

    @workflow.init
    def __init__(self, input: SessionRunInput) -> None:
        """Restore or create state; register the stream (must happen in `__init__`)."""
        self._config = input.config
        self._cas_after = input.turns_before_continue_as_new
        self._cas_events = input.history_events_before_continue_as_new
        now = workflow.now()
        self._state = input.state or SessionState(created_at=now, last_activity=now)
        self._reply_to: str | None = None
        declared = self._config.agent_ref or self._config.agent
        policy = Policy(
            timeout_seconds=self._config.approval_timeout_seconds,
            approvers=self._config.approvers,
            approve_by_requester=self._config.approve_by_requester,
            channel=self._config.channel,
            question_timeout_seconds=self._config.question_timeout_seconds,
            layers=(self._config.policies, declared.policies if declared else {}),
            sandbox=self._config.sandbox or (declared.sandbox if declared else None),
            rules=RuleContext(
                project=self._config.project, user=self._config.user, profile=self._config.profile
            ),
        )
        name = f"session {session_key_of(self.owner_id)!r}"
        self._chunks, self._supervisor = supervise(
            self.owner_id,
            name,
            self._state,
            policy,
            stream=input.stream,
            show_status=self._set_status,
            refresh=self._refresh_details,
            channel=self._channels,
            generation=input.generation,
        )
        self.publish = self._chunks.publish
        surface = self._supervisor.surface
        self._host = SupervisedHost(self._supervisor, self._state)
        self._interventions = self._supervisor.interventions
        self._graphs = SessionGraphs(
            self.owner_id, self._config, self._state, self.publish, self._outbox, self._supervisor.decisions
        )
        self._turn = Turn(name, self._state, self._supervisor, surface)

    def _channels(self, publish: Publish) -> Channel:
        """Where people are told: the chat (its outbox) and the signed webhook."""
        self._outbox = ChannelOutbox(self._config, self._state, publish)
        self._notifier = WebhookNotifier(self._config, self._state, publish, self.owner_id)
        return Channels(self._outbox, self._notifier)

    # ----------------------------------------------------------------- run

    @workflow.run
    async def run(self, input: SessionRunInput) -> LiveSession:
        """Answer messages until cancelled or idle; continue-as-new when history grows."""
        state = self._state
        self._set_status(
            SessionStatus.ACTIVE
            if state.status in (SessionStatus.WAITING_APPROVAL, SessionStatus.WAITING_INPUT)
            else state.status
        )
        deliveries = asyncio.create_task(self._outbox.run()) if self._outbox.enabled else None
        notices = asyncio.create_task(self._notifier.run()) if self._notifier.enabled else None
        idle = timedelta(seconds=self._config.idle_timeout_seconds)
        while not state.cancelled:
            try:
                await workflow.wait_condition(lambda: bool(state.inbox) or state.cancelled, timeout=idle)
            except TimeoutError:
                self._finish(SessionStatus.COMPLETED, f"idle for {self._config.idle_timeout_seconds} s")
                break
            if state.cancelled:
                break
            await self._answer(state.inbox.pop(0))
            state.turns_this_run += 1
            if not state.cancelled and self._should_continue_as_new():
                await self._continue_as_new()
        if state.cancelled and state.status != SessionStatus.CANCELLED:
            self._finish(SessionStatus.CANCELLED, state.cancel_reason or "cancelled")
        await workflow.wait_condition(lambda: not self._outbox.pending())
        if deliveries is not None:
            deliveries.cancel()
        if notices is not None:  # the last notifications get a little time, never a long wait
            with contextlib.suppress(TimeoutError):
                await workflow.wait_condition(lambda: not self._notifier.pending(), timeout=NOTICES_AT_CLOSE)
            notices.cancel()
        self._chunks.close()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.get_status()

    async def _answer(self, message: InboundMessage) -> None:
        state = self._state
        self._supervisor.requests.requester = message.sender_id
        self._supervisor.requests.channel = message.channel
        self._reply_to = message.origin.reply_to if message.origin else None
        state.messages.append(
            UniversalMessage(
                role="user",
                content=message.content,
                name=message.sender_id,
                timestamp=workflow.now(),
                metadata=_message_metadata(message),
            )
        )
        self.publish(
            TurnStarted(message=message.content, sender=message.sender_id, message_id=message.message_id)
        )
        outcome = await self._turn.run(
            run_agent_loop(
                self._host,
                agent_id=self._config.agent_id,
                agent=self._config.agent_ref or self._config.agent,
                messages=state.messages,
                max_turns=self._config.max_turns,
                remember=to_remember(state, self._config, message),
                watched=self._chunks.watch.watched,  # its start reaches them before the first step
            )
        )
        if outcome.kind == "plan" and outcome.plan is not None:
            outcome = await self._graphs.run(outcome.plan, message.sender_id)
            state.messages.append(
                UniversalMessage(role="assistant", content=outcome.answer, timestamp=workflow.now())
            )
        if outcome.kind != "cancelled" or state.cancelled:  # a cancelled turn has told everyone
            told(
                outcome,
                self._config.max_turns,
                self.publish,
                self._outbox,
                reply_to=self._reply_to,
                cancel_reason=state.cancel_reason,
            )
        state.last_activity = workflow.now()
        state.turns_total += 1
        if not outcome.remembered:
            await remember(
                experience_of(self.owner_id, self._state, self._config, message, outcome, workflow.now())
            )
        await bounds.let_go(self.owner_id, state)

    def _should_continue_as_new(self) -> bool:
        # Due even while messages are queued: they travel in the state (waiting for an empty inbox
        # let a busy session's history grow without bound: 1,000 queued messages, one 28 MB run).
        # Past `history_events_before_continue_as_new` events (runs that say it), so a session
        # evicted from the worker's cache replays its last turns only.
        info = workflow.info()
        long = self._cas_events is not None and info.get_current_history_length() >= self._cas_events
        return info.is_continue_as_new_suggested() or self._state.turns_this_run >= self._cas_after or long

    async def _continue_as_new(self) -> None:
        await workflow.wait_condition(lambda: not self._outbox.pending())
        self._state.turns_this_run = 0
        up_to = await bounds.trim_stream(self.owner_id, self._state, self._chunks.snapshot())
        self._chunks.truncate(up_to)
        await self._chunks.continue_as_new(
            lambda stream: [
                SessionRunInput(
                    config=self._config,
                    state=self._state,
                    stream=stream,
                    turns_before_continue_as_new=self._cas_after,
                    history_events_before_continue_as_new=self._cas_events,
                    generation=GENERATION,
                )
            ]
        )

    def _finish(self, status: SessionStatus, reason: str) -> None:
        ended = SessionCancelled if status == SessionStatus.CANCELLED else SessionEnded
        self._set_status(status)
        self.publish(ended(status=status, reason=reason))

    # ------------------------------------------------------ identity

    @property
    def owner_id(self) -> str:
        """This session's workflow id."""
        return workflow.info().workflow_id

    # ------------------------------------------------------ messages

    @workflow.signal
    def submit_message(self, message: InboundMessage) -> None:
        """A person's message: the decision on what waits for a person here or in the turn's graph
        (`chat_reply`; it decides only from an approver, `message.role`), else the agent's next (one
        that may not reply, `may_reply`, always the agent's next)."""
        state = self._state
        if message.message_id:
            if message.message_id in state.seen_message_ids:
                return
            state.seen_message_ids = [*state.seen_message_ids, message.message_id][-SEEN_MESSAGE_IDS_KEPT:]
        state.last_activity = workflow.now()
        if state.cancelled:
            return
        if not message.may_reply:  # never a decision: the next turn, once this one is over
            state.inbox.append(message)
            return
        if state.pending:
            self._supervisor.decisions.reply(message, state.pending[0])
            return
        relayed = self._graphs.waiting()
        if relayed is not None:
            if self._supervisor.decisions.reply(message, relayed):
                self._graphs.answered(relayed, message)
            return
        state.inbox.append(message)

    @workflow.signal
    def graph_progress(self, message: GraphProgress) -> None:
        """The child graph of this turn reports: task changes, what waits for a person, decisions."""
        self._graphs.progress(message)

    # ------------------------------------------------------ interventions answered with the session

    def _controlled(self) -> LiveSession:
        return self.get_status()

    @workflow.update
    async def cancel_turn_checked(self, control: SessionControl) -> LiveSession:
        """Cancel the running turn, not the session; answers once it has stopped.

        Rejected before history when no turn runs (`NoTurnRunning`) or the session is closed.
        """
        self._turn.cancel(control)
        await workflow.wait_condition(lambda: not self._turn.running)
        return self.get_status()

    @cancel_turn_checked.validator
    def _validate_cancel_turn(self, control: SessionControl) -> None:
        self._interventions.check_open()
        self._turn.check()

    @workflow.signal
    def cancel_turn(self, control: SessionControl) -> None:
        """Signal twin of `cancel_turn_checked` (nothing running: ignored)."""
        self._turn.cancel(control)

    # ------------------------------------------------------ queries

    @workflow.query
    def get_status(self) -> LiveSession:
        """The session as people see it (LiveSession)."""
        return session_view.live_session(self.owner_id, self._config, self._state)

    @workflow.query
    def get_pending(self) -> list[InteractionRequest]:
        """Interactions waiting for a person: the session's own, then those its graph relays (each
        names the workflow that asked it)."""
        return [*self._state.pending, *self._state.relayed]

    @workflow.query
    def get_audit(self) -> AuditTrail:
        """The decisions and interventions the session keeps, oldest first (older: `get_archives`)."""
        return AuditTrail(workflow_id=self.owner_id, entries=list(self._state.audit))

    @workflow.query
    def get_messages(self, query: MessagesQuery) -> MessageWindow:
        """Up to `query.limit` kept messages before `query.before`, and where older ones are."""
        return session_view.message_window(self._state, query)

    @workflow.query
    def get_archive(self, kind: str) -> ArchiveCursor:
        """Where the archived part of `messages`, `audit` or `stream` is."""
        return session_view.archive_cursor(self._state, kind)

    # ------------------------------------------------------ Web UI

    def _set_status(self, status: SessionStatus | str) -> None:
        self._state.status = status
        search_attributes.upsert(session_view.search_attributes(self._config, self._state))
        self._refresh_details()

    def _refresh_details(self) -> None:
        workflow.set_current_details(session_view.details_markdown(self.owner_id, self._config, self._state))
