"""Bare-Temporal shapes that Synapse paths stand on: the same primitives with nothing on top.

Workflow classes live here (an importable module) so the workflow sandbox can load them.
Activities do no work: the difference to the Synapse rows is Synapse's own cost (its agent,
its SQL, its state, its API) plus the extra Temporal commands it issues.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from temporalio.contrib.workflow_streams import WorkflowStream

    from contracts import SessionConfig
    from workflows.identity.search_attributes import PENDING, STATUS

ACTIVITY_TIMEOUT = timedelta(seconds=30)
IDLE_TIMEOUT = timedelta(seconds=SessionConfig.model_fields["idle_timeout_seconds"].default)
"""A Synapse session's default idle timeout (7 days)."""
STREAM_TOPIC = "events"


@activity.defn
async def bare_agent(message: str) -> str:
    """Stands for the agent step: returns a "tool call" at once."""
    return f"tool call for {message}"


@activity.defn
async def bare_tool(call: str) -> str:
    """Stands for the tool run: returns a "result" at once."""
    return f"result of {call}"


@activity.defn
async def bare_answer(conversation: list[str]) -> str:
    """Stands for the agent's answering step: given the conversation so far, answers at once."""
    return f"answered after {len(conversation)} messages"


ACTIVITIES = (bare_agent, bare_tool, bare_answer)


@workflow.defn
class BareUpdates:
    """Waits for updates until stopped; the approval shapes (floor, activity, local activity)."""

    def __init__(self) -> None:
        self._stopped = False
        self._messages = 0
        self._to_answer: list[str] = []

    @workflow.run
    async def run(self) -> int:
        """Answer what `answered` approved until `stop`, then wait for running handlers."""
        while True:
            await workflow.wait_condition(lambda: self._stopped or bool(self._to_answer))
            if not self._to_answer:
                break
            await workflow.execute_activity(
                bare_agent, self._to_answer.pop(0), start_to_close_timeout=ACTIVITY_TIMEOUT
            )
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._messages

    @workflow.signal
    def message(self, _text: str) -> None:
        """The signal of signal-with-start (the bare twin of `submit_message`)."""
        self._messages += 1

    @workflow.signal
    def stop(self) -> None:
        """End the workflow."""
        self._stopped = True

    @workflow.query
    def ready(self) -> bool:
        """Answerable once the first workflow task ran, i.e. the workflow is waiting."""
        return True

    @workflow.update
    async def noop(self, value: str) -> str:
        """Update round trip, handler does nothing: the floor."""
        return value

    @workflow.update
    async def with_activity(self, value: str) -> str:
        """Update → one (regular) activity → reply: the shape of an approval."""
        return await workflow.execute_activity(bare_tool, value, start_to_close_timeout=ACTIVITY_TIMEOUT)

    @workflow.update
    async def answered(self, value: str) -> str:
        """Update → one local activity → reply, then the workflow runs one (regular) activity:
        the shape of a Synapse approval without its status, timers and state (the tool run, the
        approver answered, the agent's answering step)."""
        result = await workflow.execute_local_activity(
            bare_tool, value, start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        self._to_answer.append(result)
        return result

    @workflow.update
    async def with_local_activity(self, value: str) -> str:
        """Update → one local activity → reply: the faster primitive to compare with."""
        return await workflow.execute_local_activity(
            bare_tool, value, start_to_close_timeout=ACTIVITY_TIMEOUT
        )


@workflow.defn
class BareKept:
    """A session's turn in the bare side's shapes: the same steps and commands as a Synapse turn,
    the bare side's small payloads, none of Synapse's code (API, state, agent, SQL). Started with a
    session's search attributes; the agent's step a local activity; the status upserted as the
    request opens; the request's durable timeout (a timer); the decision (`answered`: the timer
    cancelled, the status upserted, the tool a local activity, the reply); the answering step (an
    activity given the conversation: the message, the call, the result); the idle timer. A
    Synapse turn's 23 events: what its promises cost, and what is left is Synapse's own."""

    def __init__(self) -> None:
        self._stopped = False
        self._conversation: list[str] = []
        self._approved = False

    @workflow.run
    async def run(self, approval_timeout_seconds: int) -> None:
        """The agent's step, the request opened, its decision waited for (or its timeout), the
        answer, then idle until stopped or the idle timeout."""
        await workflow.wait_condition(lambda: bool(self._conversation))
        call = await workflow.execute_local_activity(
            bare_agent, self._conversation[0], start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        self._conversation.append(call)
        workflow.upsert_search_attributes([STATUS.value_set("waiting_approval"), PENDING.value_set(1)])
        with contextlib.suppress(asyncio.TimeoutError):
            await workflow.wait_condition(
                lambda: self._approved or self._stopped, timeout=timedelta(seconds=approval_timeout_seconds)
            )
        await workflow.wait_condition(lambda: self._stopped or len(self._conversation) == 3)
        if len(self._conversation) == 3:
            await workflow.execute_activity(
                bare_answer, self._conversation, start_to_close_timeout=ACTIVITY_TIMEOUT
            )
        with contextlib.suppress(asyncio.TimeoutError):
            await workflow.wait_condition(lambda: self._stopped, timeout=IDLE_TIMEOUT)
        await workflow.wait_condition(workflow.all_handlers_finished)

    @workflow.signal
    def message(self, text: str) -> None:
        """The person's message (sent by signal-with-start)."""
        self._conversation.append(text)

    @workflow.signal
    def stop(self) -> None:
        """End the workflow."""
        self._stopped = True

    @workflow.update
    async def answered(self, _principal: str) -> str:
        """The decision: the request's timer cancelled, the status upserted, the tool (given the
        call) a local activity, its result the reply; the workflow then answers and waits idle."""
        self._approved = True
        workflow.upsert_search_attributes([STATUS.value_set("running"), PENDING.value_set(0)])
        result = await workflow.execute_local_activity(
            bare_tool, self._conversation[-1], start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        self._conversation.append(result)
        return result


@workflow.defn
class BareTurn:
    """One supervised turn: message signal → "agent" activity → wait for the approval update →
    "tool" activity → the update replies with the result → done."""

    def __init__(self) -> None:
        self._message: str | None = None
        self._approved = False
        self._result: str | None = None
        self._stage = "starting"

    @workflow.run
    async def run(self) -> str:
        """The turn."""
        await workflow.wait_condition(lambda: self._message is not None)
        call = await workflow.execute_activity(
            bare_agent, self._message or "", start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        self._stage = "waiting"
        await workflow.wait_condition(lambda: self._approved)
        self._result = await workflow.execute_activity(
            bare_tool, call, start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        self._stage = "done"
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._result

    @workflow.signal
    def message(self, text: str) -> None:
        """The person's message (sent by signal-with-start)."""
        self._message = text

    @workflow.update
    async def approve(self, _principal: str) -> str:
        """The approval: answers once the tool ran, with its result."""
        self._approved = True
        await workflow.wait_condition(lambda: self._result is not None)
        return self._result or ""

    @workflow.query
    def stage(self) -> str:
        """starting, waiting (for the approval) or done."""
        return self._stage


@workflow.defn
class BareStream:
    """A `WorkflowStream` that publishes one item per `ping` signal."""

    @workflow.init
    def __init__(self) -> None:
        self._stream = WorkflowStream()
        self._events = self._stream.topic(STREAM_TOPIC, type=str)
        self._stopped = False

    @workflow.run
    async def run(self) -> None:
        """Wait until stopped."""
        await workflow.wait_condition(lambda: self._stopped)

    @workflow.signal
    def ping(self, text: str) -> None:
        """Publish one item."""
        self._events.publish(text)

    @workflow.signal
    def stop(self) -> None:
        """End the workflow."""
        self._stopped = True


@workflow.defn
class BareChild:
    """One child of a fan-out: runs one activity (as a graph task's agent step)."""

    @workflow.run
    async def run(self, index: int) -> str:
        """Run the activity; its result."""
        return await workflow.execute_activity(
            bare_agent, str(index), start_to_close_timeout=ACTIVITY_TIMEOUT
        )


@workflow.defn
class BareFanOut:
    """Starts `count` children in one workflow task and waits for all of them (a graph's shape)."""

    def __init__(self) -> None:
        self._started = 0
        self._done = 0

    @workflow.run
    async def run(self, count: int) -> int:
        """Start every child, then wait for every result; how many there were."""
        parent = workflow.info().workflow_id
        handles = await asyncio.gather(
            *(workflow.start_child_workflow(BareChild.run, i, id=f"{parent}-{i}") for i in range(count))
        )
        self._started = len(handles)
        results = await asyncio.gather(*(self._await(handle) for handle in handles))
        return len(results)

    async def _await(self, handle: workflow.ChildWorkflowHandle[BareChild, str]) -> str:
        result = await handle
        self._done += 1
        return result

    @workflow.query
    def progress(self) -> tuple[int, int]:
        """Children started and children done (a status read, the bare twin of `GET /graphs/{id}`)."""
        return self._started, self._done

    @workflow.update
    def poke(self) -> int:
        """Children done (an update taken while it starts and awaits them: the bare twin of an
        intervention during a graph's fan-out)."""
        return self._done


WORKFLOWS = (BareUpdates, BareKept, BareTurn, BareStream, BareChild, BareFanOut)
