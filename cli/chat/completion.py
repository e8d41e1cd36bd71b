"""Tab completion: slash commands (with what each does), their subcommands and arguments
(session keys after `/attach`, tags after `/chat resume`, request ids after `/approve`, ...),
and paths after `@` or where a command takes a file."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from .commands import BY_NAME, COMMAND_WORD, SPECS, is_command

Known = Callable[[str], Iterable[str]]
"""What a kind of argument can be now: `sessions`, `tags`, `pending`, `grants`, `rules`."""


class ChatCompleter(Completer):
    """Completes the REPL's input line; `known` gives the current values of each kind of argument."""

    def __init__(self, known: Known) -> None:
        self.known = known
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word[1:], complete_event)
            return
        text = document.text_before_cursor
        if not is_command(text):
            return
        words = text.split()
        if text.endswith(" ") or not words:
            words.append("")
        start = max(i for i, w in enumerate(words) if COMMAND_WORD.fullmatch(w) or i == 0)
        typed = words[start:]
        if len(typed) == 1:
            yield from self._commands(typed[0])
            return
        family = typed[0][1:]
        subs = sorted(name.split()[1] for name in BY_NAME if name.startswith(f"{family} "))
        if len(typed) == 2 and subs:
            for sub in subs:
                if sub.startswith(typed[1]):
                    yield Completion(sub, -len(typed[1]), display_meta=BY_NAME[f"{family} {sub}"].help)
        spec = BY_NAME.get(f"{family} {typed[1]}") if subs and len(typed) > 2 else BY_NAME.get(family)
        args = typed[2:] if spec is not None and " " in spec.name else typed[1:]
        if spec is None or spec.completes is None or len(args) != 1:
            return
        if spec.completes == "paths":
            yield from self._paths(args[0], complete_event)
            return
        for value in self.known(spec.completes):
            if value.startswith(args[0]):
                yield Completion(value, -len(args[0]))

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


def _subs(family: str) -> list[str]:
    return [name.split()[1] for name in BY_NAME if name.startswith(f"{family} ")]
