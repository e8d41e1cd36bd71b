"""Tool activities: `assess_tool_call` (does this call need approval?) and `run_tool`.

Tools are *declared* to agents but *executed* only here, after the workflow's approval gate, so
gating is identical across agent frameworks. Activity names are part of recorded histories:
renaming one breaks running workflows; changing the logic does not (results are recorded).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import activity

from contracts import ToolAssessment, ToolCallRequest, ToolDescriptor, ToolResult, ToolRun
from core.settings import Settings

from .registry import builtin_tools
from .sql.database import SqlTool

_SUMMARY_CHARS = 80

ToolRunner = Callable[[ToolRun], Awaitable[ToolResult]]


def summarize_call(call: ToolCallRequest) -> str:
    """`sql: DELETE FROM orders WHERE status = 'cancelled'`, on one line, cut to ~80 characters."""
    sql = call.arguments.get("sql")
    shown = sql if call.tool_id == "sql" and isinstance(sql, str) else json.dumps(call.arguments, default=str)
    line = " ".join(f"{call.tool_id}: {shown}".split())
    return line if len(line) <= _SUMMARY_CHARS else line[: _SUMMARY_CHARS - 1] + "…"


def _sql_argument(arguments: dict[str, Any]) -> str | None:
    """The `sql` argument when it is a non-empty string, else None."""
    sql = arguments.get("sql")
    return sql if isinstance(sql, str) and sql.strip() else None


def _bad_sql_argument(arguments: dict[str, Any]) -> str:
    got = f"got {arguments['sql']!r}" if "sql" in arguments else "it is missing"
    return f"argument 'sql' must be a non-empty string holding one SQL statement; {got}"


def claim_key(run: ToolRun) -> str | None:
    """The exactly-once key of an approved run: unique across sessions and across runs of one key.

    Interaction ids (`tool_1`, `tool_2`, ...) count per session, so the key adds the workflow id
    and run id: a retry of the same run finds its claim, while another session's `tool_1` (or a
    new session reusing a closed session's key) does not. Continue-as-new keeps counting
    interaction ids, so a claim never needs to outlive its run.
    """
    if run.interaction_id is None:
        return None
    info = activity.info()
    return f"{info.workflow_id}/{info.workflow_run_id}/{run.interaction_id}"


class ToolActivities:
    """The tool activities, holding the tool registry and the (lazily created) SQL tool."""

    def __init__(self, settings: Settings) -> None:
        """Keep the settings; nothing is opened until a tool first runs.

        Args:
            settings: Read for the SQL tool's database URL and row limit.
        """
        self._settings = settings
        self.tools: dict[str, ToolDescriptor] = builtin_tools()
        self._runners: dict[str, ToolRunner] = {"sql": self._run_sql}
        self._sql: SqlTool | None = None

    @property
    def sql_tool(self) -> SqlTool:
        """The SQL tool, created on first use (creating it does no I/O)."""
        if self._sql is None:
            self._sql = SqlTool(self._settings.demo_db_url, max_rows=self._settings.tools.sql_max_rows)
        return self._sql

    def activities(self) -> list[Callable[..., Any]]:
        """The bound activity methods, for `Worker(activities=...)`."""
        return [self.assess_tool_call, self.run_tool]

    def _unknown(self, tool_id: str) -> str:
        return f"no tool named {tool_id!r}; known tools: {', '.join(sorted(self.tools)) or 'none'}"

    @activity.defn(name="assess_tool_call")
    async def assess_tool_call(self, call: ToolCallRequest) -> ToolAssessment:
        """Decide whether a proposed tool call needs a person's approval, and summarise it.

        Policy `never` → no approval, `always` → approval, `destructive` → the tool decides
        (for `sql`: sqlglot classification; anything not provably read-only needs approval).
        An unknown tool is `known=False` and needs no approval (the workflow refuses it).

        Args:
            call: The agent's proposed call.

        Returns:
            The assessment, with a one-line `summary` for approval cards and the Web UI.
        """
        summary = summarize_call(call)
        descriptor = self.tools.get(call.tool_id)
        if descriptor is None:
            return ToolAssessment(
                tool_id=call.tool_id,
                known=False,
                needs_approval=False,
                reason=self._unknown(call.tool_id),
                summary=summary,
            )
        needs_approval, reason = self._policy(descriptor, call)
        activity.logger.info("assessed %s: needs_approval=%s (%s)", summary, needs_approval, reason)
        return ToolAssessment(
            tool_id=call.tool_id,
            known=True,
            needs_approval=needs_approval,
            reason=reason,
            summary=summary,
            description=descriptor.description,
            quick="quick" in descriptor.capabilities,
        )

    def _policy(self, descriptor: ToolDescriptor, call: ToolCallRequest) -> tuple[bool, str]:
        if descriptor.approval == "never":
            return False, f"{descriptor.name} never needs approval"
        if descriptor.approval == "always":
            return True, f"{descriptor.name} always needs approval"
        if descriptor.name == "sql":
            sql = _sql_argument(call.arguments)
            if sql is None:
                return True, _bad_sql_argument(call.arguments)
            classification = self.sql_tool.classify(sql)
            return classification.destructive, classification.reason
        # A destructive-policy tool that cannot classify its calls: fail safe.
        return True, f"{descriptor.name} cannot tell whether this call is destructive"

    @activity.defn(name="run_tool")
    async def run_tool(self, run: ToolRun) -> ToolResult:
        """Run an (approved or approval-free) tool call.

        Tool failures and bad arguments come back as `ToolResult(ok=False, error=...)` for the
        agent to read; only infrastructure errors (database busy or unreachable) raise, so
        Temporal retries them. With `run.interaction_id`, a destructive SQL statement is applied
        exactly once even when this activity is retried (see `claim_key`).

        Args:
            run: The call, who runs it, and the approval that authorised it.

        Returns:
            The tool's result.
        """
        runner = self._runners.get(run.call.tool_id)
        if runner is None:
            return ToolResult(tool_id=run.call.tool_id, ok=False, error=self._unknown(run.call.tool_id))
        activity.logger.info("running %s for %s", summarize_call(run.call), run.owner_id)
        return await runner(run)

    async def _run_sql(self, run: ToolRun) -> ToolResult:
        sql = _sql_argument(run.call.arguments)
        if sql is None:
            return ToolResult(tool_id="sql", ok=False, error=_bad_sql_argument(run.call.arguments))
        return await asyncio.to_thread(self.sql_tool.run, sql, claim_key(run))
