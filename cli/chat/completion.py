"""Tab completion: slash commands (with what each does), their subcommands and arguments
(session keys after `/attach`, tags after `/chat resume`, request ids after `/approve`, ...),
and paths after `@` or where a command takes a file.

Values the API holds (sessions, grants, rules) are read afresh when Tab asks for them (within
`REFRESH_SECONDS`; the last values read otherwise), so `/attach <Tab>` offers the sessions
without `/sessions` first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from .commands import BY_NAME, COMMAND_WORD, SPECS, Spec, is_command

Known = Callable[[str], Iterable[str]]
"""What a kind of argument can be now: `sessions`, `tags`, `pending`, `grants`, `rules`."""
Refresh = Callable[[str], Awaitable[None]]
"""Reads a kind's values afresh (from the API), so that `Known` gives them."""
REFRESH_SECONDS = 2.0
REMOTE = ("sessions", "grants", "rules")
"""Kinds whose values the API holds (the others the REPL knows itself)."""


class ChatCompleter(Completer):
    """Completes the REPL's input line; `known` gives the current values of each kind of argument,
    `refresh` (if given) reads a kind anew before it is offered."""

    def __init__(self, known: Known, refresh: Refresh | None = None) -> None:
        self.known, self.refresh = known, refresh
        self.paths = PathCompleter(expanduser=True)

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        found = _argument(document.text_before_cursor)
        if found is not None and found[0].completes in REMOTE and self.refresh is not None:
            with contextlib.suppress(Exception):  # an API that does not answer: the values last read
                await asyncio.wait_for(self.refresh(str(found[0].completes)), REFRESH_SECONDS)
        for completion in self.get_completions(document, complete_event):
            yield completion

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word[1:], complete_event)
            return
        typed = _typed(document.text_before_cursor)
        if len(typed) == 1:
            yield from self._commands(typed[0])
            return
        if len(typed) == 2:
            family = typed[0][1:]
            for sub in _subs(family):
                if sub.startswith(typed[1]):
                    yield Completion(sub, -len(typed[1]), display_meta=BY_NAME[f"{family} {sub}"].help)
        found = _argument(document.text_before_cursor)
        if found is None:
            return
        spec, arg = found
        if spec.completes == "paths":
            yield from self._paths(arg, complete_event)
            return
        for value in self.known(str(spec.completes)):
            if value.startswith(arg):
                yield Completion(value, -len(arg))

    def _commands(self, typed: str) -> Iterator[Completion]:
        seen = set()
        for spec in SPECS:
            family = spec.name.split()[0]
            if f"/{family}".startswith(typed) and family not in seen:
                seen.add(family)
                meta = spec.help if family == spec.name else f"{', '.join(_subs(family))}"
                yield Completion(f"/{family}", -len(typed), display_meta=meta)

    def _paths(self, typed: str, event: CompleteEvent) -> Iterator[Completion]:
        yield from self.paths.get_completions(Document(typed, len(typed)), event)


def _typed(text: str) -> list[str]:
    """The words of the last command of a line of commands, up to the cursor ([] for a message)."""
    if not is_command(text):
        return []
    words = text.split()
    if text.endswith(" ") or not words:
        words.append("")
    start = max(i for i, w in enumerate(words) if COMMAND_WORD.fullmatch(w) or i == 0)
    return words[start:]


def _argument(text: str) -> tuple[Spec, str] | None:
    """The command whose first argument the cursor is at, and what is typed of it (None: elsewhere,
    or a command whose argument completes to nothing)."""
    typed = _typed(text)
    if len(typed) < 2:
        return None
    family = typed[0][1:]
    spec = BY_NAME.get(f"{family} {typed[1]}") if _subs(family) and len(typed) > 2 else BY_NAME.get(family)
    args = typed[2:] if spec is not None and " " in spec.name else typed[1:]
    if spec is None or spec.completes is None or len(args) != 1:
        return None
    return spec, args[0]


def _subs(family: str) -> list[str]:
    return sorted(name.split()[1] for name in BY_NAME if name.startswith(f"{family} "))
