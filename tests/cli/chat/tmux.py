"""Driving the real `synapse chat` in tmux: a tmux server of its own per test (`tmux -L`), keys in
with `send-keys`, the screen out with `capture-pane`, polled with a bound (never a bare sleep)."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import sys
import time
import uuid
from pathlib import Path

SYNAPSE = str(Path(sys.executable).parent / "synapse")
TMUX = shutil.which("tmux")
WIDTH, HEIGHT = 200, 50
READY = "/help lists the commands"


class Tmux:
    """One tmux server (its own socket) whose windows run REPLs with `HOME` and a cwd of the test's."""

    def __init__(self, home: Path, cwd: Path, api: str) -> None:
        assert TMUX, "tmux is not installed"
        self.socket = f"synapse-{uuid.uuid4().hex[:12]}"
        self.home, self.cwd, self.api = home, cwd, api
        self.target = ""

    async def tmux(self, *args: str) -> str:
        """Run a tmux command on this server; its output."""
        process = await asyncio.create_subprocess_exec(
            TMUX or "tmux",
            "-L",
            self.socket,
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        assert process.returncode == 0, f"tmux {' '.join(args)}: {err.decode()}"
        return out.decode()

    async def start(self, *args: str) -> None:
        """A REPL (`synapse chat --api <api> ARGS`) in a new window, once it shows it is ready."""
        env = {
            "HOME": str(self.home),
            "USER": "alice",
            "TERM": "xterm-256color",
            "SYNAPSE_CHAT_BELL": "false",
        }
        command = shlex.join([SYNAPSE, "chat", "--api", self.api, *args])
        exports = " ".join(f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items())
        if not self.target:
            await self.tmux(
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                str(WIDTH),
                "-y",
                str(HEIGHT),
                "-c",
                str(self.cwd),
                *shlex.split(exports),
                command,
            )
            await self.tmux("set-option", "-g", "remain-on-exit", "on")
            await self.tmux("set-option", "-g", "history-limit", "5000")
            self.target = "t:0"
        else:
            out = await self.tmux(
                "new-window",
                "-P",
                "-F",
                "#{window_index}",
                "-t",
                "t",
                "-c",
                str(self.cwd),
                *shlex.split(exports),
                command,
            )
            self.target = f"t:{out.strip()}"
        await self.wait_for(READY)

    async def keys(self, *keys: str) -> None:
        """Press keys (tmux names: `Enter`, `C-c`, `C-u`, ...)."""
        await self.tmux("send-keys", "-t", self.target, *keys)

    async def type(self, text: str, enter: bool = True) -> None:
        """Type `text` as it is, then Enter."""
        await self.tmux("send-keys", "-t", self.target, "-l", text)
        if enter:
            await self.keys("Enter")

    async def screen(self) -> str:
        """What the window shows, with its scrollback (wrapped lines joined)."""
        return await self.tmux("capture-pane", "-p", "-J", "-S", "-5000", "-t", self.target)

    async def visible(self) -> str:
        """What the window shows now, without its scrollback."""
        return await self.tmux("capture-pane", "-p", "-J", "-t", self.target)

    async def wait_for(self, text: str, *, count: int = 1, within: float = 30.0) -> str:
        """The screen once `text` is on it `count` times; fails after `within` seconds, showing it."""
        deadline = time.monotonic() + within
        screen = ""
        while time.monotonic() < deadline:
            screen = await self.screen()
            if screen.count(text) >= count:
                return screen
            await asyncio.sleep(0.1)
        raise AssertionError(f"{text!r} (x{count}) not shown within {within} s; the screen:\n{screen}")

    async def pid(self) -> int:
        """The process the window runs (the REPL itself)."""
        return int((await self.tmux("display-message", "-p", "-t", self.target, "#{pane_pid}")).strip())

    async def kill(self) -> None:
        """Stop this tmux server and everything it runs."""
        process = await asyncio.create_subprocess_exec(
            TMUX or "tmux", "-L", self.socket, "kill-server", stderr=asyncio.subprocess.DEVNULL
        )
        await process.wait()
