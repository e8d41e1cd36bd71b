"""Tab completion of the input line: commands, subcommands, paths, and values the API holds, read
afresh when Tab asks for them."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from cli.chat.completion import ChatCompleter


class Values:
    """What completion knows, and what a refresh would read from the API."""

    def __init__(self) -> None:
        self.known: dict[str, list[str]] = {"tags": ["nightly", "noon"], "pending": ["tool_1"]}
        self.api = {"sessions": ["chat-1", "chat-2", "lark:x"], "grants": ["grant_1"], "rules": ["rule_1"]}
        self.refreshed: list[str] = []

    async def refresh(self, kind: str) -> None:
        self.refreshed.append(kind)
        self.known[kind] = self.api[kind]


async def complete(text: str, values: Values | None = None) -> list[str]:
    values = values or Values()
    completer = ChatCompleter(lambda kind: values.known.get(kind, []), values.refresh)
    found = completer.get_completions_async(
        Document(text, len(text)), CompleteEvent(completion_requested=True)
    )
    return [completion.text async for completion in found]


async def test_commands_and_their_subcommands() -> None:
    assert await complete("/se") == ["/sessions", "/settings"]
    assert await complete("/chat re") == ["resume"]
    assert await complete("/pause /sta") == ["/status"]
    assert await complete("hello /sta") == []


async def test_values_the_api_holds_are_read_when_asked_for() -> None:
    values = Values()
    assert await complete("/attach chat-", values) == ["chat-1", "chat-2"]
    assert await complete("/revoke ", values) == ["grant_1"]
    assert await complete("/rules delete r", values) == ["rule_1"]
    assert values.refreshed == ["sessions", "grants", "rules"]
    assert await complete("/chat resume n", values) == ["nightly", "noon"]
    assert await complete("/approve ", values) == ["tool_1"]
    assert values.refreshed == ["sessions", "grants", "rules"]  # local values: nothing read


async def test_an_api_that_fails_leaves_the_values_last_read() -> None:
    values = Values()
    values.known["sessions"] = ["chat-old"]
    del values.api["sessions"]
    assert await complete("/attach ", values) == ["chat-old"]


async def test_paths_after_at_and_for_files(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text("{}")
    assert await complete(f"read @{tmp_path}/pl") == ["an.json"]
    assert await complete(f"/graph run {tmp_path}/pl") == ["an.json"]
