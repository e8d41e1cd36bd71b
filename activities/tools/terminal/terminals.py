"""The worker's terminals, one per session: started on first use, replaced when gone, each with its
scratch folder and what its sandboxed commands carried out."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import carry
from .backend import TerminalAuthFailed, TerminalBackend, TerminalLost
from .scratch import Scratch
from .shell import CommandOutcome, Shell

APPLY_SECONDS = 10.0
"""Time for the shell to go to the folder a sandboxed command ended in."""


@dataclass
class Terminal:
    """A session's shell and its private files (outside every sandbox)."""

    shell: Shell
    scratch: Scratch
    overlay: carry.Overlay = field(default_factory=carry.Overlay)
    """The exports its sandboxed commands made: later sandboxed commands start with them."""

    def state(self) -> dict[str, Any]:
        """What every result says of the terminal: where it is, and what waits for input there."""
        return {"cwd": self.shell.cwd, "waiting_for_input": self.shell.waiting}

    async def take_back(self, outcome: CommandOutcome) -> None:
        """Keep what a sandboxed command ended with (if anything): its exports for later sandboxed
        commands, and its folder for the shell, by a script the shell reads with `source` (nothing
        the sandbox wrote is typed)."""
        try:
            data = self.scratch.state.read_bytes()
        except FileNotFoundError:
            return
        self.scratch.state.write_bytes(b"")
        carried = carry.read(data)
        self.overlay.take(carried)
        script = carried.cd()
        if script is None:
            return
        self.scratch.apply.write_text(script)
        source = f"builtin source -- {shlex.quote(str(self.scratch.apply))}"
        applied = await self.shell.run(source, total_seconds=APPLY_SECONDS, idle_seconds=APPLY_SECONDS)
        outcome.cwd = applied.cwd

    async def close(self) -> None:
        """End the shell and remove its files."""
        await self.shell.close()
        shutil.rmtree(self.scratch.folder, ignore_errors=True)


class Terminals:
    """The terminals of this worker, by the workflow id of the session (or task run) owning each."""

    def __init__(self, backend: Callable[[], TerminalBackend], scratch_root: Path, max_bytes: int) -> None:
        """`backend` makes a new terminal's backend; scratch folders go under `scratch_root` (absolute)."""
        self._backend = backend
        self._root = scratch_root.resolve()
        self._max_bytes = max_bytes
        self._by_owner: dict[str, Terminal] = {}

    def __iter__(self) -> Iterator[Terminal]:
        return iter(list(self._by_owner.values()))

    async def get(self, owner: str) -> tuple[Terminal | str, dict[str, Any]]:
        """The owner's terminal (a new one when it has none, or its last one went while idle), with
        what the result should say about it; or why none could start."""
        gone = self._by_owner.get(owner)
        notes: dict[str, Any] = {}
        if gone is not None and gone.shell.backend.ended:  # it exited or dropped while idle
            await self.drop(owner)
            notes["reconnected"] = "the terminal had gone while idle: this command ran in a new one"
        if owner in self._by_owner:
            return self._by_owner[owner], notes
        shell = Shell(self._backend(), max_bytes=self._max_bytes)
        try:
            await shell.start()
        except (TerminalAuthFailed, TerminalLost) as err:  # an auth failure says so itself
            await shell.close()
            return (str(err) if isinstance(err, TerminalAuthFailed) else f"no terminal: {err}"), notes
        self._root.mkdir(parents=True, exist_ok=True)
        scratch = Scratch(Path(tempfile.mkdtemp(prefix="scratch-", dir=self._root)))
        self._by_owner[owner] = terminal = Terminal(shell, scratch)
        return terminal, {**notes, "fresh_terminal": True}

    async def drop(self, owner: str) -> None:
        """Forget the owner's terminal and end it (the next command starts a fresh one)."""
        terminal = self._by_owner.pop(owner, None)
        if terminal is not None:
            try:
                await terminal.close()
            except Exception:  # a backend already gone cannot be ended twice; its files still go
                shutil.rmtree(terminal.scratch.folder, ignore_errors=True)

    async def close(self) -> None:
        """End every terminal."""
        for owner in list(self._by_owner):
            await self.drop(owner)
