"""A running tool's output (`ToolOutput`, seed 004's chunk type and metadata) as a stream event.

The terminal sends what its command prints as typed pieces (`content`, `thinking`, `tool_use`,
`pending`, `complete`, `error`), each with the metadata seed 004 gives that type; each becomes
the event of that type (`contracts.events.Output`), its metadata typed fields. Metadata a piece
does not know is left out; metadata that does not fit its field leaves the event with its text
only, so a tool's output never fails the workflow. Pure, no I/O.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from contracts import CommandEvent, ToolOutput
    from contracts.events import (
        CommandEnded,
        CommandFailed,
        CommandOutput,
        CommandPrompt,
        CommandThinking,
        CommandToolUse,
    )

OUTPUT_EVENTS: dict[str, type[CommandEvent]] = {
    "content": CommandOutput,
    "thinking": CommandThinking,
    "tool_use": CommandToolUse,
    "pending": CommandPrompt,
    "complete": CommandEnded,
    "error": CommandFailed,
}
"""Seed 004's chunk type -> the event it is."""


def output_event(output: ToolOutput) -> CommandEvent:
    """The event of one piece of a running tool's output."""
    model = OUTPUT_EVENTS[output.chunk_type]
    said = {"text": output.text, "source_tool": output.tool_id, "interaction_id": output.interaction_id}
    known = {
        key: value for key, value in output.metadata.items() if key in model.model_fields and key not in said
    }
    try:
        return model.model_validate({**known, **said})
    except ValidationError:
        return model.model_validate(said)
