"""Running one command at a time in a terminal and knowing when it is done.

A generic shell tells nothing when a command ends, so each command is followed by a sentinel
the shell prints with the command's exit status and working directory. The command and its
sentinel are sent as one compound command (`{ cmd\\n}; printf ...`), parsed before anything runs,
so a program reading its input never eats the sentinel. Echo is off (`stty -echo`), so the output
is the command's own. A command that is silent for `idle_seconds` or runs past `total_seconds` gets
Ctrl-C; the shell is then asked for a fresh sentinel to stay in step.

A program that marks its prompt with OSC 697 (an agent CLI in Amazon Q's style) is done with a
command when it shows that prompt: it then waits in the foreground, and the next command is typed
into it (its echo removed) until it exits and the shell prints the sentinel it still owes.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from .ansi import strip_ansi
from .backend import TerminalBackend, TerminalLost, TerminalState
from .chunks import OSC_697, START_PROMPT, TerminalChunk, TerminalType, process, prompt_of, without_prompts

SENTINEL_MARK = "__SYN"
SETUP = (
    "stty -echo; bind 'set enable-bracketed-paste off' 2>/dev/null; "
    "bind 'set echo-control-characters off' 2>/dev/null; PS1=''; PS2=''; PROMPT_COMMAND=''; "
    "set +H -P; unset MAIL MAILPATH MAILCHECK; IGNOREEOF=1000; "
    "__synapse_nl=$'\\n'; __synapse_status() { return \"$1\"; }"
)
"""Echo off (a Ctrl-C that stops a command is not shown as `^C` either), no prompts; no history expansion and no mail checks (both expand text as they go);
folders as they physically are (`cd` into a symlink shows where it leads). `IGNOREEOF`: bash's race
between Ctrl-C and a child taking the terminal (a loop of short commands) can make its next read
fail for a moment, which it takes as end of input and exits on; it now says so and reads on."""
EOF_NOTICE = 'Use "exit" to leave the shell.\n'
"""What bash prints then; removed from an interrupted command's output."""
READY_TIMEOUT = 15.0
INTERRUPT_GRACE = 10.0
PROBE_PAUSE = 0.2
"""After Ctrl-C, before asking for a sentinel: the shell takes the interrupt first."""
PROBE_WAITS = (0.3, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5)
PROBE_WAIT = 2.0
"""How long each sentinel is waited for (then `PROBE_WAIT`) before the next Ctrl-C. A loop of short
commands ignores a Ctrl-C that reaches a child which has just ended (often: ~40% on a busy machine),
so early ones come quickly; later waits are longer for a shell slowed by load."""
POLL = 0.1
PROMPT_SETTLE = 0.2
"""How long a prompt must stand, a program holding the terminal, before the command counts as done
at it: a program that printed one and ended (`cat` of a file holding one) has given the terminal
back to the shell by then, and its sentinel follows."""


@dataclass
class CommandOutcome:
    """How a command went."""

    output: str
    """What it printed, as text (escape sequences removed), up to the byte limit."""
    exit_status: int | None
    cwd: str | None
    execution_time: float
    interrupted: str | None = None
    """Why it was interrupted with Ctrl-C: `inactivity`, `timeout` or `cancelled`."""
    truncated_bytes: int = 0
    raw: bytes = b""
    """The raw bytes (escape sequences included), up to the byte limit."""
    prompt: str | None = None
    """Set when a program showed its OSC 697 prompt: it waits for the next command as its input."""
    terminal_type: TerminalType = "generic"

    @property
    def success(self) -> bool:
        """Whether it ran to the end with exit status 0 (or to a program's prompt)."""
        return (self.exit_status == 0 or self.prompt is not None) and self.interrupted is None


def _probe(marker: str, status: str = "$?") -> bytes:
    # \137 is "_": the typed text never contains the marker, only the printed one does. A newline in
    # the folder's name is shown as `?`: the sentinel's line holds one folder, never a made-up second.
    return f"printf '\\n\\137\\137SYN{marker}:%s:%s\\n' {status} \"${{PWD//$__synapse_nl/?}}\"\n".encode()


class Shell:
    """A terminal backend driven one command at a time."""

    def __init__(self, backend: TerminalBackend, max_bytes: int = 1_000_000) -> None:
        """Drive `backend`; keep at most `max_bytes` of a command's output."""
        self.backend = backend
        self._max_bytes = max_bytes
        self.cwd: str | None = None
        self.foreground: str | None = None
        """The marker of the sentinel a program waiting at its prompt still owes (None: the shell waits)."""
        self.waiting: str | None = None
        """The prompt that program waits at."""

    async def start(self) -> None:
        """Start the backend and wait until the shell answers (state IDLE)."""
        await self.backend.start()
        await self.backend.send(f"{SETUP}\n".encode())
        marker = uuid.uuid4().hex[:12]
        await self.backend.send(_probe(marker))
        buffer = ""
        deadline = time.monotonic() + READY_TIMEOUT
        seen = f"{SENTINEL_MARK}{marker}:"
        while seen not in buffer or "\n" not in buffer.split(seen, 1)[1]:
            if time.monotonic() > deadline:
                raise TerminalLost(f"the shell did not become ready within {READY_TIMEOUT:.0f} s")
            chunk = await self.backend.read(POLL)
            if chunk:
                buffer += chunk.decode("utf-8", "replace")
        self._parse_sentinel(buffer, marker)
        self.backend.remember_settings()
        self.backend.state = TerminalState.IDLE

    async def run(
        self,
        command: str,
        *,
        total_seconds: float,
        idle_seconds: float,
        on_output: Callable[[TerminalChunk], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        prompts: bool = True,
    ) -> CommandOutcome:
        """Run `command`; its outcome once the sentinel arrives (or after Ctrl-C and a resync).

        `on_output` gets the output as it comes, line by line, as typed chunks (`chunks`);
        `cancelled` is polled every round, output or not (True: Ctrl-C). `prompts`: a program's
        OSC 697 prompt ends the command and takes the next one as its input (False: the command
        runs to its sentinel, whatever it prints: a sandboxed one could otherwise print a prompt
        and have the next command typed into the shell itself).
        """
        started = time.monotonic()
        self.backend.state = TerminalState.BUSY
        marker = self.foreground or uuid.uuid4().hex[:12]
        echo = None
        if self.foreground:  # input for the program at its prompt, in the program's own settings
            echo = command
            await self.backend.send(f"{command}\r".encode())
        else:
            self.backend.restore_settings()
            await self.backend.send(f"{{ {command}\n}}; ".encode() + _probe(marker))
        stream = _Stream(
            f"\n{SENTINEL_MARK}{marker}:",
            self._max_bytes,
            on_output,
            echo=echo,
            terminal_type="qcli" if self.foreground else "generic",
            program_waits=self._program_waits if prompts else None,
        )
        in_program = self.foreground is not None
        last_output = started
        interrupted: str | None = None
        poll = cancelled or (lambda: False)
        try:
            while not stream.done:
                chunk = await self.backend.read(POLL)
                now = time.monotonic()
                if chunk:
                    last_output = now
                    stream.feed(chunk)
                stream.settle(now)
                stop = poll()  # polled on every round, output or not
                if interrupted is None and not stream.done:
                    if stop:
                        interrupted = "cancelled"
                    elif now - started > total_seconds:
                        interrupted = "timeout"
                    elif now - last_output > idle_seconds:
                        interrupted = "inactivity"
                    if interrupted is not None:
                        await self._interrupt(stream, poll, in_program)
        except asyncio.CancelledError:  # the task running us was cancelled: leave the shell ready
            if not stream.done:
                await self._interrupt(stream, lambda: False, in_program)
            self.backend.state = TerminalState.IDLE
            self.foreground = marker if stream.prompt is not None else None
            self.waiting = stream.prompt
            raise
        self.backend.state = TerminalState.IDLE
        prompt = stream.prompt  # a program at its prompt (after a Ctrl-C too) still owes the sentinel
        self.foreground = marker if prompt is not None else None
        self.waiting = prompt
        status, cwd = stream.sentinel_fields()
        self.cwd = cwd or self.cwd
        output = strip_ansi(stream.text())
        return CommandOutcome(
            output=output.replace(EOF_NOTICE, "") if interrupted else output,
            exit_status=130 if interrupted else status,
            cwd=self.cwd,
            execution_time=round(time.monotonic() - started, 3),
            interrupted=interrupted,
            truncated_bytes=stream.dropped,
            raw=stream.raw(),
            prompt=prompt,
            terminal_type=stream.terminal_type,
        )

    def _program_waits(self) -> bool:
        """Whether a program, not the shell, holds the terminal (unknown on ttyd: taken as yes)."""
        return self.backend.shell_in_foreground() is not True

    async def _interrupt(self, stream: _Stream, poll: Callable[[], bool], in_program: bool) -> None:
        """Ctrl-C, then fresh sentinels until one answers (each after another Ctrl-C): the interrupted
        line never prints its own, and a program's exit may discard what was typed meanwhile.

        Input for a program at its prompt is never followed by shell probes (they would be typed
        into the program): after Ctrl-C it must show its prompt again or exit (its sentinel).
        """
        if not in_program:
            self.backend.restore_settings()  # Ctrl-C must interrupt, whatever a command set
        await self.backend.send(b"\x03")
        if not in_program:  # (a program at its prompt is asked alone: its sentinel must still print)
            self.backend.interrupt_shell()
        deadline = time.monotonic() + INTERRUPT_GRACE
        if in_program:
            await self._feed_until(stream, poll, deadline)
            if not stream.done:
                raise TerminalLost("the program did not come back to its prompt after Ctrl-C")
        attempt = 0
        while not stream.done:
            if time.monotonic() > deadline:
                raise TerminalLost("the shell did not answer after Ctrl-C")
            if attempt:  # a loop of short commands can outlive one Ctrl-C (it came between two of them)
                self.backend.restore_settings()
                await self.backend.send(b"\x03")
                self.backend.interrupt_shell()
            # the pause comes after the Ctrl-C: a SIGINT that reaches bash once it reads the probe
            # would discard what it read so far ("bash: rintf: command not found")
            await asyncio.sleep(PROBE_PAUSE)
            resync = uuid.uuid4().hex[:12]
            stream.expect(f"\n{SENTINEL_MARK}{resync}:")
            self.backend.restore_settings()
            await self.backend.send(_probe(resync, "130"))
            wait = PROBE_WAITS[attempt] if attempt < len(PROBE_WAITS) else PROBE_WAIT
            await self._feed_until(stream, poll, min(time.monotonic() + wait, deadline))
            attempt += 1

    async def _feed_until(self, stream: _Stream, poll: Callable[[], bool], until: float) -> None:
        """Output into `stream` until it is done or the monotonic time `until` has passed."""
        while not stream.done and time.monotonic() < until:
            poll()
            chunk = await self.backend.read(POLL)
            if chunk:
                stream.feed(chunk)
            stream.settle(time.monotonic())

    def _parse_sentinel(self, buffer: str, marker: str) -> None:
        tail = buffer.split(f"{SENTINEL_MARK}{marker}:", 1)[1].split("\n", 1)[0].rstrip("\r")
        self.cwd = tail.split(":", 1)[1] if ":" in tail else self.cwd

    async def close(self) -> None:
        """End the terminal."""
        await self.backend.close()


class _Stream:
    """A command's output until its sentinel or a program's OSC 697 prompt: kept (bounded),
    streamed as typed chunks line by line, the sentinel held back."""

    def __init__(
        self,
        sentinel: str,
        max_bytes: int,
        on_output: Callable[[TerminalChunk], None] | None,
        *,
        echo: str | None = None,
        terminal_type: TerminalType = "generic",
        program_waits: Callable[[], bool] | None = None,
    ) -> None:
        self._sentinels = [sentinel]
        self._program_waits = program_waits
        """Asked when a prompt shows: is a program there to take the next line? (None: prompts are output)."""
        self._max = max_bytes
        self._on_output = on_output
        self._echo = echo
        self._text = ""
        self._sent = 0
        self._raw = bytearray()
        self.dropped = 0
        self.done = False
        self.prompt: str | None = None
        self.candidate: str | None = None
        """A prompt shown, not yet known to be a program's that waits (`settle`)."""
        self._candidate_at = 0.0
        self.terminal_type: TerminalType = terminal_type
        self._fields = ""
        self._scanned = 0
        """Where the last search for an end (sentinel, prompt) stopped: each chunk is searched once."""
        self.cut_chars = 0

    def expect(self, sentinel: str) -> None:
        """Also accept another sentinel (after an interrupt); the first found ends the stream."""
        self._sentinels.append(sentinel)
        self.feed(b"")

    def feed(self, chunk: bytes) -> None:
        room = self._max - len(self._raw)
        self._raw += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)
        self._text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        self._drop_echo()
        start = max(self._scanned - 200, 0)  # a sentinel or marker may straddle two chunks
        for sentinel in self._sentinels:
            at = self._text.find(sentinel, start)
            if at >= 0 and "\n" in self._text[at + len(sentinel) :]:
                self._fields = self._text[at + len(sentinel) :].split("\n", 1)[0]
                self._text = self._text[:at]
                self.done = True
                break
        if not self.done and self._program_waits is not None and OSC_697 in self._text[start:]:
            self.terminal_type = "qcli"
        if not self.done and self.terminal_type == "qcli" and self._program_waits is not None:
            candidate = prompt_of(self._text[self._sent :])
            if candidate != self.candidate:
                self.candidate, self._candidate_at = candidate, time.monotonic()
        self._scanned = len(self._text)
        self._emit()
        self._bound()

    def settle(self, now: float) -> None:
        """Done at the prompt shown, once it has stood `PROMPT_SETTLE` seconds and a program, not the
        shell, holds the terminal (one that printed a prompt and ended is not waiting for input)."""
        if self.done or self.candidate is None or self._program_waits is None:
            return
        if now - self._candidate_at >= PROMPT_SETTLE and self._program_waits():
            self.prompt, self.done = self.candidate, True
            self._emit()

    def _bound(self) -> None:
        """Keep the text bounded: past twice the limit, what was already streamed beyond the limit
        goes (the result keeps the beginning and the end, and says how much was cut)."""
        if self._sent <= 2 * self._max:
            return
        note = f"\n[... output cut here: more than {self._max:,} characters ...]\n"
        cut = self._sent - self._max
        self.cut_chars += cut
        self._text = self._text[: self._max] + note + self._text[self._sent :]
        self._sent = self._max + len(note)
        self._scanned = max(self._scanned - cut + len(note), 0)

    def _drop_echo(self) -> None:
        """A program at its prompt echoes the line typed into it: that is not its output."""
        if self._echo is None:
            return
        line = self._echo
        visible = strip_ansi(self._text)
        if visible.startswith(line + "\n") or visible.startswith(line + "\r"):
            self._text = self._text.split("\n", 1)[1]
            self._echo = None
        elif not line.startswith(visible.rstrip("\r")):
            self._echo = None  # the output does not begin with the echo: there is none

    def _emit(self) -> None:
        """Send complete lines not sent yet (all of it once done), never part of a sentinel or of
        a prompt still being drawn."""
        if self._on_output is None or (self._echo is not None and not self.done):
            return  # nothing goes out while the echo of the input may still be coming
        end = len(self._text) if self.done else self._text.rfind("\n") + 1
        if not self.done and self._text.endswith("\n\n"):
            end -= 1  # the last newline may be the sentinel's own: held until more comes
        if not self.done and self.terminal_type == "qcli":  # a spinner redraws its line with \r
            end = max(end, self._text.rfind("\r") + 1)
        if not self.done and (prompt := self._text.find(START_PROMPT, self._sent)) >= 0:
            end = min(end, prompt)
        if end > self._sent:
            piece = self._text[self._sent : end]
            self._sent = end
            for typed in process(piece, self.terminal_type):
                self._on_output(typed)

    def text(self) -> str:
        """The output without a program's prompts."""
        return without_prompts(self._text) if self.terminal_type == "qcli" else self._text

    def raw(self) -> bytes:
        return bytes(self._raw)

    def sentinel_fields(self) -> tuple[int | None, str | None]:
        status, _, cwd = self._fields.rstrip("\r").partition(":")  # a folder's own spaces are its name's
        return (int(status) if status.strip().lstrip("-").isdigit() else None), (cwd or None)
