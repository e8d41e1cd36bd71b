"""A tiny workflow for the CLI tests (workflow classes must live in an importable module)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn
async def shout(text: str) -> str:
    """Upper-case `text`."""
    return text.upper()


@workflow.defn
class ShoutWorkflow:
    """Runs one activity and returns its result: enough events for a meaningful replay."""

    @workflow.run
    async def run(self, text: str) -> str:
        """Shout `text` through the activity."""
        return await workflow.execute_activity(shout, text, start_to_close_timeout=timedelta(seconds=10))
