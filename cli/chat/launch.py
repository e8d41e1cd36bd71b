"""`synapse chat`: settings read (an error names the file and the key), the terminal checked,
then the REPL run against the API until the person quits."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from core.client import SynapseClient

from .chat import Chat
from .places import project_root
from .render import TerminalConsole
from .repl import Repl
from .settings import Effective, SettingsError, load

HTTP_TIMEOUT = 15.0


@dataclass(frozen=True)
class ChatOptions:
    """What the command line says (None: not given, the settings decide)."""

    session: str | None = None
    api: str | None = None
    api_key: str | None = None
    agent: str | None = None
    profile: str | None = None


def run_chat(options: ChatOptions) -> int:
    """Run the REPL; its exit code (2: bad settings or no terminal)."""
    cwd = Path.cwd()
    project = project_root(cwd)
    flags = {
        "api_url": options.api,
        "api_key": options.api_key,
        "agent": options.agent,
        "profile": options.profile,
    }
    try:
        effective = load(project, flags)
    except SettingsError as err:
        for problem in err.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "error: synapse chat needs a terminal; for scripts and CI use `synapse run -p PROMPT`",
            file=sys.stderr,
        )
        return 2
    asyncio.run(_chat(options.session, effective, project, cwd))
    return 0


async def _chat(session: str | None, effective: Effective, project: Path, cwd: Path) -> None:
    settings = effective.settings
    principal = settings.principal or os.environ.get("USER") or "you"
    async with SynapseClient(settings.api_url, api_key=settings.api_key, timeout=HTTP_TIMEOUT) as client:
        chat = Chat(
            client,
            effective,
            project=project,
            cwd=cwd,
            console=TerminalConsole(highlight=False),
            principal=principal,
        )
        await Repl(chat).run(session)
