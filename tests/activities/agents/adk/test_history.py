"""The workflow's conversation as ADK contents: call ids, pairing, unanswered calls, task input."""

from __future__ import annotations

from typing import Any

from google.genai import types

from activities.agents.adk.history import conversation_contents
from contracts import UniversalMessage


def call(tool_id: str, call_id: str | None, **arguments: Any) -> dict[str, Any]:
    return {"tool_id": tool_id, "arguments": arguments, "call_id": call_id}


def shape(contents: list[types.Content]) -> list[tuple[str, list[Any]]]:
    """Each content as (role, [text | ("call", id, name) | ("response", id, name)])."""
    result = []
    for content in contents:
        parts: list[Any] = []
        for part in content.parts or []:
            if part.function_call:
                parts.append(("call", part.function_call.id, part.function_call.name))
            elif part.function_response:
                parts.append(("response", part.function_response.id, part.function_response.name))
            else:
                parts.append(part.text)
        result.append((content.role or "", parts))
    return result


def test_a_batch_and_its_results_share_two_contents_matched_by_call_id() -> None:
    messages = [
        UniversalMessage(role="user", content="both"),
        UniversalMessage(
            role="assistant", content={"tool_calls": [call("sql", "a", sql="x"), call("terminal", "b")]}
        ),
        UniversalMessage(role="tool", name="terminal", tool_call_id="b", content={"ok": True}),
        UniversalMessage(role="tool", name="sql", tool_call_id="a", content={"denied": True}),
        UniversalMessage(role="assistant", content="done"),
    ]

    assert shape(conversation_contents(messages, None)) == [
        ("user", ["both"]),
        ("model", [("call", "a", "sql"), ("call", "b", "terminal")]),
        ("user", [("response", "b", "terminal"), ("response", "a", "sql")]),
        ("model", ["done"]),
    ]


def test_old_histories_get_call_ids_and_unanswered_calls_get_an_error() -> None:
    messages = [
        UniversalMessage(role="assistant", content={"tool_call": call("sql", None, sql="x")}),
        UniversalMessage(role="tool", name="sql", tool_call_id="tool_1", content="plain text"),
        UniversalMessage(role="assistant", content={"tool_call": call("sql", None, sql="y")}),
        UniversalMessage(role="user", content="never mind"),
    ]

    contents = conversation_contents(messages, {"goal": "g"})

    assert shape(contents) == [
        ("user", ['Task input (JSON):\n{"goal": "g"}']),
        ("model", [("call", "call_1", "sql")]),
        ("user", [("response", "call_1", "sql")]),
        ("model", [("call", "call_2", "sql")]),
        ("user", [("response", "call_2", "sql")]),
        ("user", ["never mind"]),
    ]
    assert contents[2].parts and contents[2].parts[0].function_response
    assert contents[2].parts[0].function_response.response == {"result": "plain text"}
    assert contents[4].parts and contents[4].parts[0].function_response
    assert "did not run" in str(contents[4].parts[0].function_response.response)


def test_plans_and_structured_answers_become_text() -> None:
    messages = [UniversalMessage(role="assistant", content={"plan": {"new_tasks": []}})]

    assert shape(conversation_contents(messages, None)) == [("model", ['plan: {"new_tasks": []}'])]
    assert shape(conversation_contents([], None)) == [("user", ["(no message)"])]
