"""Output of a running command, sent to its session while it runs, and the heartbeats of that run."""

from __future__ import annotations

import asyncio
import time

from temporalio import activity

from contracts import ToolOutput, ToolOutputBatch
from contracts.names import TOOL_OUTPUTS

from .chunks import TerminalChunk

FLUSH_SECONDS = 0.5


class Streamer:
    """Output sent to the session while the command runs, as typed chunks: batched, one
    `tool_outputs` signal per batch at most every `FLUSH_SECONDS`; the final chunk (`complete` or
    `error`) last."""

    def __init__(self, tool_id: str, owner: str, interaction_id: str | None) -> None:
        self._tool_id = tool_id
        self._owner = owner
        self._interaction_id = interaction_id
        self._pending: list[TerminalChunk] = []
        self._sent = 0
        self._last = time.monotonic() - FLUSH_SECONDS
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._sending = asyncio.Lock()
        self._last_type: str | None = None
        """The type of the last chunk sent."""

    def add(self, chunk: TerminalChunk) -> None:
        last = self._pending[-1] if self._pending else None
        if last is not None and last.type == chunk.type == "content":
            last.extend(chunk.content, chunk.metadata["raw_length"], chunk.metadata.get("styled"))
        elif chunk.type == "thinking" and (last.type if last else self._last_type) == "thinking":
            return  # one chunk per spinner, not one per frame (the shell reports every frame)
        else:
            self._pending.append(chunk)
        if self._timer is None:  # at most one flush every FLUSH_SECONDS; the first one at once
            wait = max(FLUSH_SECONDS - (time.monotonic() - self._last), 0.0)
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def tick(self) -> bool:
        """Polled while the command runs: whether the activity was cancelled (heartbeats, sent by
        `heartbeat_while_running`, bring the cancel)."""
        return activity.in_activity() and activity.is_cancelled()

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self, final: TerminalChunk) -> None:
        """Send what is left, then the final chunk."""
        if self._timer is not None:  # nothing is scheduled after the final flush
            self._timer.cancel()
            self._timer = None
        self._pending.append(final)
        await self.flush()

    async def flush(self) -> None:
        """Send the chunks gathered so far, in order, as one `tool_outputs` signal (none when empty)."""
        async with self._sending:  # in order, one batch at a time
            chunks, self._pending = self._pending, []
            self._last_type = chunks[-1].type if chunks else self._last_type
            self._last = time.monotonic()
            self._sent += sum(len(c.content) for c in chunks)
            if not chunks or not activity.in_activity():
                return
            batch = ToolOutputBatch(
                outputs=[
                    ToolOutput(
                        interaction_id=self._interaction_id,
                        tool_id=self._tool_id,
                        text=chunk.content,
                        chunk_type=chunk.type,
                        metadata=chunk.metadata,
                    )
                    for chunk in chunks
                ]
            )
            try:
                await activity.client().get_workflow_handle(self._owner).signal(TOOL_OUTPUTS, batch)
            except Exception as err:  # the stream is a courtesy; the result carries everything
                activity.logger.info("could not stream terminal output to %s: %s", self._owner, err)
