"""The `agent_step` activity: runs one step of the agent named by `AgentStepInput.agent_id`.

Adapters are stateless: the workflow passes the conversation in and gets one `AgentResult`
back. The activity name is part of recorded histories (do not rename it); the agents' logic may
change freely, since recorded results are replayed rather than recomputed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from cli.settings import Settings
from contracts import AgentResult, AgentStepInput

from . import demo_agent

#: An agent adapter: one step in, one result out.
AgentFn = Callable[[AgentStepInput], Awaitable[AgentResult]]

_HEARTBEAT_SECONDS = 1.0


async def _demo(step: AgentStepInput) -> AgentResult:
    return demo_agent.decide(step)


def _sleep_seconds(input_data: dict[str, Any] | None) -> float:
    """`input_data.sleep_seconds` as a number of seconds (0 when absent)."""
    if not input_data or input_data.get("sleep_seconds") is None:
        return 0.0
    value = input_data["sleep_seconds"]
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ApplicationError(
            f"input_data.sleep_seconds must be a non-negative number of seconds, got {value!r}",
            type="InvalidAgentInput",
            non_retryable=True,
        )
    return float(value)


async def _sleep_heartbeating(seconds: float) -> None:
    """Wait `seconds`, heartbeating about every second; a retry resumes from the last heartbeat."""
    details = activity.info().heartbeat_details
    done = float(details[0]) if details and isinstance(details[0], int | float) else 0.0
    started = time.monotonic() - done
    while (elapsed := time.monotonic() - started) < seconds:
        await asyncio.sleep(min(_HEARTBEAT_SECONDS, seconds - elapsed))
        activity.heartbeat(time.monotonic() - started)


class AgentActivities:
    """The agent activities and the registry of agents they can run."""

    def __init__(self, settings: Settings) -> None:
        """Build the registry of agents.

        Args:
            settings: Configuration (configured agents will be read from here).
        """
        self._settings = settings
        self.agents: dict[str, AgentFn] = {"Agent:demo": _demo}

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.agent_step]

    @activity.defn(name="agent_step")
    async def agent_step(self, step: AgentStepInput) -> AgentResult:
        """Run one step of `step.agent_id` and return its `AgentResult`.

        `input_data.sleep_seconds` makes the step wait that long first, heartbeating, so tests
        can exercise timeouts, cancellation and worker restarts.

        Args:
            step: The agent id, conversation and task inputs.

        Returns:
            The agent's one result (a failure is a `FAILURE` result, not an exception).

        Raises:
            ApplicationError: `UnknownAgent` or `InvalidAgentInput`, both non-retryable.
        """
        agent = self.agents.get(step.agent_id)
        if agent is None:
            known = ", ".join(sorted(self.agents))
            raise ApplicationError(
                f"no agent named {step.agent_id!r}; known agents: {known}",
                type="UnknownAgent",
                non_retryable=True,
            )
        seconds = _sleep_seconds(step.input_data)
        if seconds:
            activity.logger.info("%s sleeps %.1fs as input_data.sleep_seconds asks", step.agent_id, seconds)
            await _sleep_heartbeating(seconds)
        result = await agent(step)
        activity.logger.info(
            "%s step for %s: %s %s",
            step.agent_id,
            step.owner_id,
            result.status,
            type(result.output.intent).__name__,
        )
        return result
