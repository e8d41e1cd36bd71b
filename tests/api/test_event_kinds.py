"""Every kind of event goes through a workflow's stream and the SSE endpoint as itself: its chunk
type on the `event:` line, its model in `data:`, with the API's sentence for it beside it."""

from __future__ import annotations

import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from api.main import create_app
from contracts import SentChunk
from core.settings import Settings
from core.wording import line_of
from worker import workflow_runner
from workflows.identity.ids import session_workflow_id

from ..contracts.event_samples import SAMPLES
from ..support import collect_events, serve
from .event_echo import EchoInput, EventEcho


async def test_each_kind_reaches_an_sse_client_as_itself(client: Client, settings: Settings) -> None:
    key = f"echo-{uuid.uuid4().hex[:8]}"
    queue = settings.temporal.task_queue
    runner = workflow_runner(client.data_converter)
    async with Worker(client, task_queue=queue, workflows=[EventEcho], workflow_runner=runner):
        handle = await client.start_workflow(
            EventEcho.run, EchoInput(key=key, events=SAMPLES), id=session_workflow_id(key), task_queue=queue
        )
        try:
            async with serve(create_app(settings, client=client)) as http:
                chunks = await collect_events(http, key, lambda c: c.sequence_id == len(SAMPLES) - 1)
        finally:
            await handle.signal(EventEcho.stop)
    assert [c.sequence_id for c in chunks] == list(range(len(SAMPLES)))
    for chunk, event in zip(chunks, SAMPLES, strict=True):
        assert chunk.content == event and type(chunk.content) is type(event)
        assert chunk.chunk_type == type(event).chunk_type and chunk.is_final == type(event).final
        assert isinstance(chunk, SentChunk)
        line = line_of(event)
        assert (chunk.text, chunk.tone) == (line.text, line.tone), type(event).__name__
