"""The REPL's short questions besides its input line: one key out of a few (`y`/`n`, an approval's
keys), or one line to edit (a rule's prefix, a statement, a reason).

At most one is open at a time, and whoever learns that its question is moot (the request was
decided elsewhere) closes it with `close`: the waiting caller gets `Closed`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.selection import SelectionType


class Closed(Exception):
    """The open question was closed from elsewhere (`Prompts.close`)."""


class Interrupted(Exception):
    """Ctrl-C while a question was open."""


class Quit(Interrupted):
    """Ctrl-D while a question was open: the person leaves (what was asked stays unanswered)."""


def _answer(key: str) -> Callable[[KeyPressEvent], None]:
    def answer(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text(key)  # the key stays shown after the question
        event.app.exit(result=key)

    return answer


class Prompts:
    """Asks one question at a time on the terminal."""

    def __init__(self) -> None:
        self._keys: PromptSession[str] = PromptSession()
        self._lines: PromptSession[str] = PromptSession()
        self._open: PromptSession[str] | None = None
        self.look: dict[str, Any] = {}
        """How the questions look (the REPL's footer and style), given to every question."""

    async def key(self, message: AnyFormattedText, keys: Iterable[str]) -> str:
        """Wait for one of `keys` (others are ignored); the key pressed.

        Raises:
            Closed: `close` was called meanwhile.
            Interrupted: Ctrl-C (`Quit`: Ctrl-D).
        """
        bindings = KeyBindings()
        for key in keys:
            bindings.add(key)(_answer(key))

        @bindings.add(Keys.Any)
        @bindings.add(Keys.Enter)
        def _ignore(event: KeyPressEvent) -> None:
            """Only the keys offered answer; nothing is typed."""

        return await self._ask(self._keys, message, key_bindings=bindings)

    async def line(
        self,
        message: AnyFormattedText,
        default: str = "",
        lexer: Lexer | None = None,
        *,
        selected: bool = False,
    ) -> str:
        """A line the person edits (Enter takes it; Esc-Enter adds a line break). `selected`: the
        `default` is shown selected, so that typing replaces it, Enter alone keeps it, and an
        arrow key or Backspace edits it instead (Ctrl-U is not needed to start afresh).

        Raises:
            Closed: `close` was called meanwhile.
            Interrupted: Ctrl-C (`Quit`: Ctrl-D).
        """
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        def select() -> None:
            buffer = self._lines.default_buffer
            if not buffer.text:
                return
            buffer.cursor_position = 0
            buffer.start_selection(selection_type=SelectionType.CHARACTERS)
            if buffer.selection_state is not None:  # shift mode: typing replaces, arrows unselect
                buffer.selection_state.enter_shift_mode()
            buffer.cursor_position = len(buffer.text)

        return await self._ask(
            self._lines,
            message,
            default=default,
            lexer=lexer,
            key_bindings=bindings,
            pre_run=select if selected else None,
        )

    def close(self) -> bool:
        """Close the open question, if any (its caller gets `Closed`); whether one was open."""
        session = self._open
        if (
            session is None
            or not session.app.is_running
            or session.app.future is None
            or session.app.future.done()
        ):
            return False
        session.app.exit(exception=Closed())
        return True

    async def _ask(self, session: PromptSession[str], message: AnyFormattedText, **options: Any) -> str:
        self._open = session
        try:
            return await session.prompt_async(message, **self.look, **options)
        except KeyboardInterrupt:
            raise Interrupted from None
        except EOFError:
            raise Quit from None
        finally:
            self._open = None
