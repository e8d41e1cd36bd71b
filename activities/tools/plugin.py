"""The tool plugin interface: what the `assess_tool_call` and `run_tool` activities need of a tool.

A tool is a subclass of `Tool` in a package of its own under `activities/tools/`, registered by
one line in `registry.py`. The workflow never knows tool names: it asks `assess_tool_call`
(does this call need a person's approval?) and runs approved calls with `run_tool`, which both
dispatch here. Tools are declared to models (`descriptor`) but executed only by `run_tool`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self

from temporalio import activity

from contracts import (
    ArtifactRef,
    CallContext,
    SandboxProfile,
    ToolCallRequest,
    ToolDescriptor,
    ToolResult,
    ToolRun,
    WorkerBinding,
)
from core.rules.match import CallFacts
from core.settings import Settings

from ..artifacts.offload import generic_preview

SUMMARY_CHARS = 80
"""Length of a call's one-line summary (approval cards, the Web UI's activity summaries)."""


def cut(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    return cut(" ".join(text.split()), limit)


def generic_summary(call: ToolCallRequest) -> str:
    """`tool: {"argument": ...}` on one line."""
    return one_line(f"{call.tool_id}: {json.dumps(call.arguments, default=str)}")


def claim_key(run: ToolRun) -> str | None:
    """The exactly-once key of an approved run: unique across sessions and across runs of one key.

    Interaction ids (`tool_1`, `tool_2`, ...) count per session, so the key adds the workflow id
    and run id: a retry of the same run finds its claim, while another session's `tool_1` (or a
    new session reusing a closed session's key) does not. Continue-as-new keeps counting
    interaction ids, so a claim never needs to outlive its run. Outside an activity (a test or a
    benchmark calling a tool directly) there is no run id: the key is the owner's and the
    interaction's. None for a run that needed no approval.
    """
    if run.interaction_id is None:
        return None
    if not activity.in_activity():
        return f"{run.owner_id}/{run.interaction_id}"
    info = activity.info()
    return f"{info.workflow_id}/{info.workflow_run_id}/{run.interaction_id}"


class Tool(ABC):
    """One tool: its descriptor and policy, how to assess, summarise, run and describe its calls."""

    DESCRIPTOR: ClassVar[ToolDescriptor]
    """What models are told about the tool, and its approval policy (`never`, `always`, `destructive`)."""

    def __init__(self) -> None:
        self.descriptor = self.DESCRIPTOR

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The tool as configured (creating it does no I/O; `prepare` does)."""

    def prepare(self) -> None:
        """Create what the tool needs before its first run (the worker calls it at start)."""
        return None  # nothing, unless the tool needs something

    async def close(self) -> None:
        """Release what the tool holds (connections, processes): the worker is stopping."""
        return None  # nothing, unless the tool holds something

    def assess(self, call: ToolCallRequest, state: dict[str, Any]) -> tuple[bool, str]:
        """For the `destructive` policy: whether this call needs approval, and why.

        `state`: for a worker-bound tool, the metadata of its last result in the session while its
        worker still holds it (the terminal: the `cwd` it is really in); empty otherwise.
        The default fails safe: a tool that cannot classify its calls always asks.
        """
        return True, f"{self.descriptor.name} cannot tell whether this call is destructive"

    def head(self, call: ToolCallRequest) -> str | None:
        """The call's command head, which a `session_prefix` grant allows (None: no such grant).

        E.g. `DELETE orders` for SQL, the program for a shell command.
        """
        return None

    def rule_facts(self, call: ToolCallRequest, needs_approval: bool) -> CallFacts:
        """What approval rules read of the call: its arguments and whether the tool would ask for it
        (a shell tool adds a simple command's words, a SQL tool the statement's kind and table)."""
        return CallFacts(tool_id=call.tool_id, arguments=call.arguments, writes=needs_approval)

    def context(self, call: ToolCallRequest, state: dict[str, Any]) -> CallContext:
        """Where the call runs, shown with it on approval requests and cards (nothing by default).

        `state` as for `assess`: for a worker-bound tool, its last result's metadata (e.g. `cwd`),
        which the workflow keeps: it knows where the session's state went.
        """
        return CallContext()

    def sandbox(self, call: ToolCallRequest, state: dict[str, Any]) -> SandboxProfile | None:
        """The sandbox an approved call runs in unless the session, its agent or the approver
        chooses another (`ToolRun.sandbox`); None: the tool cannot sandbox this call. `state` as for
        `assess`."""
        return None

    def binding(self) -> WorkerBinding | None:
        """Set when the tool keeps state in this worker between calls of one session (a shell).

        The workflow then sends a session's later calls to this worker's own task queue, and
        tells the session its state was lost when that worker is gone.
        """
        return None

    def summarize(self, call: ToolCallRequest) -> str:
        """The call on one line, e.g. `sql: DELETE FROM orders WHERE ...`."""
        return generic_summary(call)

    @abstractmethod
    async def run(self, run: ToolRun) -> ToolResult:
        """Run the call; bad arguments and tool errors are `ok=False` results, never raised.

        Args:
            run: The call (`run.call`); the workflow running it (`run.owner_id`); the approval
                that authorised it (`run.interaction_id`, None when none was needed): a tool with
                side effects applies a run with the same `claim_key(run)` at most once; and for a
                tool with a `sandbox()`, the sandbox this approved run uses (`run.sandbox`, None:
                the tool's default), ignored by tools that cannot sandbox.

        Raises:
            Exception: Only for infrastructure failures worth a retry by Temporal.
        """

    @classmethod
    def preview(cls, content: Any, budget: int, ref: ArtifactRef) -> Any:
        """What history, the stream and the agent carry of a result too large to carry whole.

        About `budget` bytes as JSON; the whole result is the artifact `ref`. The default cuts
        the result's text; a tool whose results have structure (rows) previews them better.
        """
        return generic_preview(content, budget, ref)

    @classmethod
    def describe(cls, content: Any) -> str | None:
        """A sentence people read about a successful result's `content` (None: the generic one)."""
        return None
