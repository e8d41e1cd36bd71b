"""What an MCP server sends into workflows is held to the nesting limit: a tool whose schema nests
past it is still offered, its schema cut, and its declaration reads back from a payload."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from temporalio.contrib.pydantic import pydantic_data_converter

from activities.tools.mcp.connection import McpConnection
from activities.tools.mcp.tool import descriptor_of
from contracts import McpServerSpec, ToolDescriptor
from core.nesting import too_deep


def nested(levels: int) -> dict[str, Any]:
    """A schema of arrays of arrays, `levels` JSON levels deep."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        schema = {"type": "array", "items": schema}
    return schema


def read_back(descriptor: ToolDescriptor) -> ToolDescriptor:
    converter = pydantic_data_converter.payload_converter
    [payload] = converter.to_payloads([descriptor])
    [back] = converter.from_payloads([payload], [ToolDescriptor])
    assert isinstance(back, ToolDescriptor)
    return back


@pytest.mark.parametrize("levels", [10, 64, 65, 250])
def test_a_tools_schema_past_the_limit_is_cut_and_reads_back(levels: int) -> None:
    server = McpConnection(McpServerSpec(name="deep", command="true"), lambda _: None)
    remote = types.Tool(name="dig", input_schema=nested(levels))

    descriptor = descriptor_of(server, remote, max_json_depth=64)

    assert too_deep(descriptor.arguments_schema, 64) is None
    assert too_deep(nested(levels), levels - 1) is not None  # (the schema is as deep as it says)
    if levels <= 64:
        assert descriptor.arguments_schema == nested(levels)  # within the limit: untouched
    else:
        assert descriptor.arguments_schema != nested(levels)
    assert read_back(descriptor) == descriptor  # the worker reads it back, whatever the server sent
