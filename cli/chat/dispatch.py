"""Running a line of slash commands: each in turn, stopping at the first that fails (an unknown
command names the closest known ones)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from core.client import SynapseError

from . import chat_commands, graphs, info_commands, session_commands
from .chat import Chat, CommandError
from .commands import BY_NAME, parse
from .prompts import Closed, Interrupted, Quit

Handler = Callable[[Chat, list[str]], Awaitable[None]]
HANDLERS: dict[str, Handler] = {
    **session_commands.HANDLERS,
    **chat_commands.HANDLERS,
    **graphs.HANDLERS,
    **info_commands.HANDLERS,
}
assert set(HANDLERS) == set(BY_NAME), "every command has a handler, and every handler a command"


async def run_commands(chat: Chat, line: str) -> None:
    """Run the commands of `line` in order; the first that fails stops the rest (said)."""
    invocations = parse(line)
    for index, invocation in enumerate(invocations):
        done = invocation.error is None and await guarded(
            chat, HANDLERS[invocation.name](chat, invocation.args)
        )
        if invocation.error is not None:
            chat.renderer.error(invocation.error)
        if not done:
            rest = invocations[index + 1 :]
            if rest:
                chat.renderer.note(f"  not run: {' '.join('/' + i.name for i in rest)}")
            return
        if chat.quitting:
            return


async def guarded(chat: Chat, work: Awaitable[Any]) -> bool:
    """Do `work`; whether it went through (why not is shown: a refused command, the API's answer,
    an API that cannot be reached)."""
    try:
        await work
    except CommandError as err:
        chat.renderer.error(str(err))
    except SynapseError as err:
        chat.renderer.error(f"the API answered {err.status}: {err.detail}")
    except httpx.HTTPError as err:
        chat.renderer.error(
            f"the API at {chat.client.http.base_url} could not be reached ({err or type(err).__name__})"
        )
    except Quit:
        chat.renderer.note("  (left unanswered: nothing was done)")
        chat.quitting = True
    except (Closed, Interrupted):
        chat.renderer.note("  (left unanswered: nothing was done)")
    else:
        return True
    return False
