"""Tool activities: `assess_tool_call` (does this call need approval?) and `run_tool`.

Tools are *declared* to agents but *executed* only here, after the workflow's approval gate, so
gating is identical across agent frameworks. Activity names are part of recorded histories:
renaming one breaks running workflows; changing the logic does not (results are recorded).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from temporalio import activity

from contracts import (
    AssessRequest,
    GrantScope,
    RuleContext,
    RuleDecision,
    RuleVerdict,
    ToolAssessment,
    ToolCallRequest,
    ToolDescriptor,
    ToolResult,
    ToolRun,
)
from contracts.names import ASSESS_TOOL_CALL, RUN_TOOL
from core.artifacts import ArtifactStore, preview_text
from core.nesting import cut_nesting, too_deep
from core.rules.store import RuleStore
from core.settings import Settings

from ..artifacts.offload import Offloader
from ..rules.book import RuleBook, RulesUnreadable
from .plugin import Tool, generic_summary
from .registry import build_tools

ERROR_CHARS = 4000
"""A tool's error message is cut to this (the rest of a long error helps nobody in a chat)."""


def summarize_call(call: ToolCallRequest, tool: Tool | None) -> str:
    """The call on one line, as its tool summarises it (generic for an unknown tool)."""
    return tool.summarize(call) if tool is not None else generic_summary(call)


def grant_scopes(descriptor: ToolDescriptor, head: str | None) -> list[str]:
    """What an approval of a call may grant: nothing when the tool forbids it; a prefix needs a head."""
    if not descriptor.allow_grants:
        return []
    return [GrantScope.SESSION, *([GrantScope.SESSION_PREFIX] if head else [])]


class ToolActivities:
    """The tool activities, dispatching to the registered tools (`registry.py`) by name."""

    def __init__(self, settings: Settings, tools: dict[str, Tool] | None = None) -> None:
        """Configure every registered tool; nothing is opened until a tool first runs.

        Args:
            settings: Read by each tool's `from_settings`; `limits.inline_bytes` bounds results,
                `limits.max_json_depth` their nesting.
            tools: The tools to dispatch to instead of the registry's (tests).
        """
        self.tools: dict[str, Tool] = tools if tools is not None else build_tools(settings)
        self.worker_queue: str | None = None
        """This worker's own task queue (`worker.py` sets it): where a worker-bound tool's state is."""
        self.offloader = Offloader(ArtifactStore.from_settings(settings), settings.limits.inline_bytes)
        self.max_json_depth = settings.limits.max_json_depth
        """A result nested deeper is cut there (`core.nesting`): the workflow could not read it."""
        self.rules = RuleBook(RuleStore.from_settings(settings))

    def prepare(self) -> None:
        """Let every tool create what it needs before its first run (worker start)."""
        for tool in self.tools.values():
            tool.prepare()

    async def close(self) -> None:
        """Release what the tools hold (the worker is stopping)."""
        for tool in self.tools.values():
            await tool.close()

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.assess_tool_call, self.run_tool]

    def _unknown(self, tool_id: str) -> str:
        return f"no tool named {tool_id!r}; known tools: {', '.join(sorted(self.tools)) or 'none'}"

    @activity.defn(name=ASSESS_TOOL_CALL)
    async def assess_tool_call(self, request: AssessRequest) -> ToolAssessment:
        """Decide whether a proposed tool call needs a person's approval, and summarise it.

        Policy `never` → no approval, `always` → approval, `destructive` → the tool decides
        (for `sql`: sqlglot classification; anything not provably read-only needs approval).
        An unknown tool is `known=False` and needs no approval (the workflow refuses it).

        Args:
            request: The agent's proposed call, what the workflow knows of its tool's state, and
                the rule context.

        Returns:
            The assessment, with a one-line `summary` for approval cards and the Web UI.
        """
        call, state = request.call, request.state
        tool = self.tools.get(call.tool_id)
        summary = summarize_call(call, tool)
        if tool is None:
            return ToolAssessment(
                tool_id=call.tool_id,
                known=False,
                needs_approval=False,
                reason=self._unknown(call.tool_id),
                summary=summary,
            )
        descriptor = tool.descriptor
        if descriptor.approval == "never":
            needs_approval, reason = False, f"{descriptor.name} never needs approval"
        elif descriptor.approval == "always":
            needs_approval, reason = True, f"{descriptor.name} always needs approval"
        else:
            needs_approval, reason = tool.assess(call, state)
        rule, needs_approval, unreadable = await self._ruled(tool, call, request, needs_approval)
        reason = unreadable or reason
        head = tool.head(call)
        # What the call says (SQL, a command) is DEBUG only: INFO lines carry no user text (issue 47).
        activity.logger.debug("assessed %s: needs_approval=%s (%s)", summary, needs_approval, reason)
        activity.logger.info(
            "assessed %s (%d chars): needs_approval=%s", call.tool_id, len(summary), needs_approval
        )
        return ToolAssessment(
            tool_id=call.tool_id,
            known=True,
            needs_approval=needs_approval,
            reason=reason,
            summary=summary,
            description=descriptor.description,
            quick="quick" in descriptor.capabilities,
            head=head,
            grants=grant_scopes(descriptor, head),
            critical=descriptor.critical,
            worker_bound=tool.binding(),
            context=tool.context(call, state),
            sandbox=tool.sandbox(call, state),
            rule=rule,
        )

    async def _ruled(
        self, tool: Tool, call: ToolCallRequest, request: AssessRequest, needs_approval: bool
    ) -> tuple[RuleVerdict | None, bool, str | None]:
        """The rule that decides the call (None: none does, or it allows what runs freely anyway),
        whether a person must be asked (a deny or an ask rule makes the workflow's gate take it,
        an allow too, which the gate then applies), and why when the rules could not be read."""
        facts = tool.rule_facts(call, needs_approval)
        context = request.rules or RuleContext()
        try:
            rule = await asyncio.to_thread(
                self.rules.decide, facts, context, critical=tool.descriptor.critical
            )
        except RulesUnreadable as err:
            return None, True, f"{err}: a person is asked"
        if rule is None or (rule.decision == RuleDecision.ALLOW and not needs_approval):
            return None, needs_approval, None
        activity.logger.info("rule %s decides %s: %s", rule.rule_id, call.tool_id, rule.decision)
        return rule, True, None

    @activity.defn(name=RUN_TOOL)
    async def run_tool(self, run: ToolRun) -> ToolResult:
        """Run an (approved or approval-free) tool call.

        Tool failures and bad arguments come back as `ToolResult(ok=False, error=...)` for the
        agent to read; only infrastructure errors (database busy or unreachable) raise, so
        Temporal retries them. With `run.interaction_id`, a tool with side effects applies the
        call exactly once even when this activity is retried (see `plugin.claim_key`).

        Args:
            run: The call, who runs it, and the approval that authorised it.

        Returns:
            The tool's result.
        """
        tool = self.tools.get(run.call.tool_id)
        if tool is None:
            return ToolResult(tool_id=run.call.tool_id, ok=False, error=self._unknown(run.call.tool_id))
        summary = tool.summarize(run.call)
        activity.logger.debug("running %s", summary, extra={"interaction_id": run.interaction_id})
        activity.logger.info(
            "running %s (%d chars) for %s",
            run.call.tool_id,
            len(summary),
            run.owner_id,
            extra={"interaction_id": run.interaction_id},
        )
        result = await tool.run(run)
        activity.metric_meter().create_counter(
            "synapse_tool_runs", "Tool calls run, by tool and result."
        ).add(1, {"tool": run.call.tool_id, "ok": "true" if result.ok else "false"})
        if result.ok and result.said is None:
            result = result.model_copy(update={"said": tool.said(result.content)})
        if self.worker_queue is not None and tool.binding() is not None:
            result = result.model_copy(
                update={"metadata": {**result.metadata, "worker_queue": self.worker_queue}}
            )
        if too_deep(result.content, self.max_json_depth) is not None:
            result = result.model_copy(update={"content": cut_nesting(result.content, self.max_json_depth)})
        if result.error and len(result.error) > ERROR_CHARS:
            result = result.model_copy(update={"error": preview_text(result.error, ERROR_CHARS)})
        if result.content is None or self.offloader.fits(result.content):
            return result
        preview, ref = await self.offloader.offload(
            result.content, name=f"{run.call.tool_id} result", owner_id=run.owner_id, preview=tool.preview
        )
        activity.logger.info(
            "%s result is %d bytes: stored as %s", run.call.tool_id, ref.size_bytes, ref.artifact_id
        )
        return result.model_copy(update={"content": preview, "artifact": ref})
