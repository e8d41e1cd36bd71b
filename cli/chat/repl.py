"""The REPL itself: the input line (prompt_toolkit: history, completion, Esc-Enter for a new
line, vi keys if set, Ctrl-L clears), the footer (session, agent, connection, what waits,
profile, and a spinner while the agent works), and the loop that alternates between the input
line and the requests that wait for the person.

Ctrl-C while a turn runs asks whether to cancel it; Ctrl-D quits, also at a request's prompt (the
session goes on, the request stays pending). Output
printed while the person types appears above the input line (`patch_stdout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.styles import Style

from .chat import Chat
from .commands import is_command
from .completion import ChatCompleter
from .dispatch import guarded, run_commands
from .outgoing import send_line
from .prompts import Closed, Interrupted, Quit
from .state import Request

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STYLE = Style.from_dict(
    {
        "bottom-toolbar": "noreverse bg:#262626 #bcbcbc",
        "footer.busy": "bold #ffaf00",
        "footer.alert": "bold #ff5f5f",
        "prompt": "bold #5fafff",
        "prompt.shell": "bold #ffaf00",
    }
)


class _Wake(Exception):
    """The input line was put aside: something waits for the person."""


class Repl:
    """Runs one `Chat` on the terminal until the person quits."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        settings = chat.effective.settings
        history = Path(settings.history_file).expanduser()
        history.parent.mkdir(parents=True, exist_ok=True)
        self.input: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            completer=ChatCompleter(self._known, chat.refresh_known),
            complete_while_typing=False,
            vi_mode=settings.vi_mode,
            bottom_toolbar=self._footer,
            refresh_interval=0.25,
            key_bindings=self._bindings(),
            style=STYLE,
        )
        self.draft = ""
        self._work: asyncio.Future[bool | None] | None = None
        chat.approvals.alert = self.alert
        chat.prompts.look = {"bottom_toolbar": self._footer, "refresh_interval": 0.25, "style": STYLE}

    def alert(self) -> None:
        """A request arrived: ring the bell and put the input line aside so that it is asked."""
        if self.chat.effective.settings.bell:
            with contextlib.suppress(Exception):
                self.input.app.output.bell()
                self.input.app.output.flush()
        app = self.input.app
        if app.is_running and app.future is not None and not app.future.done():
            self.draft = app.current_buffer.text
            app.erase_when_done = True  # the line comes back, with the draft, once the request is answered
            app.exit(exception=_Wake())

    async def run(self, key: str | None) -> None:
        chat = self.chat
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._interrupt_work)
        with patch_stdout(raw=True):
            await guarded(chat, chat.open(key))
            chat.renderer.note(
                f"synapse chat · {chat.client.http.base_url} · project {chat.state.project} · /help lists the commands",
                "bold",
            )
            while not chat.quitting:
                request = chat.approvals.next()
                if request is not None:
                    await self._ask(request)
                    continue
                self.input.app.erase_when_done = False
                try:
                    line = await self.input.prompt_async(self._prompt(), default=self.draft)
                except _Wake:
                    continue
                except KeyboardInterrupt:
                    self.draft = ""
                    await self._ctrl_c()
                    continue
                except EOFError:
                    break
                self.draft = ""
                await self._handle(line)
            await chat.close()
            chat.renderer.note(
                f"bye: session {chat.state.key} goes on (synapse chat {chat.state.key} comes back to it)"
            )
        loop.remove_signal_handler(signal.SIGINT)

    async def _handle(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        work = (
            run_commands(self.chat, text)
            if is_command(text)
            else guarded(self.chat, send_line(self.chat, text))
        )
        self._work = task = asyncio.ensure_future(work)
        try:
            await task
        except asyncio.CancelledError:
            self.chat.renderer.note("  interrupted")
        finally:
            self._work = None

    def _interrupt_work(self) -> None:
        """Ctrl-C while a command runs (the terminal is not in the input line then): stop it."""
        if self._work is not None:
            self._work.cancel()

    async def _ask(self, request: Request) -> None:
        approvals = self.chat.approvals
        try:
            await approvals.ask(request)
        except Quit:
            approvals.later.add(request.interaction_id)
            self.chat.renderer.note(f"  {request.interaction_id} left pending")
            self.chat.quitting = True
        except Interrupted:
            approvals.later.add(request.interaction_id)
            if not await self._offer_cancel():
                approvals.later.discard(request.interaction_id)
                approvals.again(request)

    async def _ctrl_c(self) -> None:
        if self.chat.state.turn:
            await self._offer_cancel()
        else:
            self.chat.renderer.note("(nothing is running: Ctrl-D or /quit leaves)")

    async def _offer_cancel(self) -> bool:
        """Ask whether to cancel the running turn, and do it; whether it was."""
        try:
            key = await self.chat.prompts.key("Cancel the running turn? [y/n] › ", "yn")
        except Quit:
            self.chat.quitting = True
            return False
        except (Interrupted, Closed):
            key = "n"
        if key != "y":
            return False
        self.chat.renderer.note("  cancelling the turn…")
        return await guarded(self.chat, self.chat.cancel_turn())

    def _prompt(self) -> FormattedText:
        if self.chat.state.shell_mode:
            return FormattedText([("class:prompt.shell", "! ")])
        return FormattedText([("class:prompt", "› ")])

    def _footer(self) -> FormattedText:
        state = self.chat.state
        parts: list[tuple[str, str]] = []
        if state.activity:
            frame = SPINNER[int(time.monotonic() * 8) % len(SPINNER)]
            parts.append(("class:footer.busy", f" {frame} {state.activity} "))
        waiting = len(state.pending)
        parts.append(("", f" {state.key} · {state.agent} · {state.connection} · "))
        parts.append(("class:footer.alert" if waiting else "", f"{waiting} pending"))
        parts.append(
            ("", f" · profile {state.profile}" + (" · shell mode" if state.shell_mode else "") + " ")
        )
        return FormattedText(parts)

    def _known(self, kind: str) -> Iterable[str]:
        if kind == "pending":
            return list(self.chat.state.pending)
        if kind == "tags":
            with contextlib.suppress(ValueError):
                return [chat.tag for chat in self.chat.saved.all()]
            return []
        return self.chat.known.get(kind, [])

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-l")
        def _clear(event: KeyPressEvent) -> None:
            event.app.renderer.clear()

        return bindings
