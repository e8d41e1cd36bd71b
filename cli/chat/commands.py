"""Slash commands: what each is (`SPECS`, shown by `/help` and used for completion) and how a typed
line is read into them.

A line starting with `/` holds one or more commands (`/pause /status`): a new command starts at
each word that names one (a quoted word never does, nor an argument such as `/tmp/plan.json`).
`//text` sends `/text` to the agent. An unknown name is answered with the closest known ones.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

WORD = re.compile(r"""(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))(?=\s|$)""")
COMMAND_WORD = re.compile(r"/[A-Za-z][\w-]*")


@dataclass(frozen=True)
class Spec:
    """One command: its name (`chat save`), usage, what it does, how many arguments it takes
    (`rest`: the last one takes the rest of the line), and what its first argument completes to."""

    name: str
    usage: str
    help: str
    group: str
    min_args: int = 0
    max_args: int = 0
    rest: bool = False
    completes: str | None = None
    """`sessions`, `tags`, `pending`, `grants`, `rules`, `paths` or None."""


APPROVALS, SESSION, SAVED, OTHER = "Approvals", "Session", "Saved chats", "Everything else"
SPECS = (
    Spec("status", "/status", "the session: status, agent, profile, project, what waits", APPROVALS),
    Spec("pending", "/pending", "requests waiting for a person, with their ids", APPROVALS),
    Spec("approve", "/approve ID", "approve a waiting request once", APPROVALS, 1, 1, completes="pending"),
    Spec(
        "deny",
        "/deny ID [REASON]",
        "deny it (the reason goes to the agent)",
        APPROVALS,
        1,
        2,
        True,
        "pending",
    ),
    Spec("grants", "/grants", "what this session allows without asking", APPROVALS),
    Spec(
        "revoke",
        "/revoke GRANT",
        "revoke a grant: its calls are asked for again",
        APPROVALS,
        1,
        1,
        completes="grants",
    ),
    Spec("rules", "/rules", "the approval rules of this project (and your profile's)", APPROVALS),
    Spec("rules delete", "/rules delete RULE", "delete a saved rule", APPROVALS, 1, 1, completes="rules"),
    Spec("pause", "/pause", "pause the session (the agent starts nothing new)", SESSION),
    Spec("resume", "/resume", "resume a paused session", SESSION),
    Spec(
        "cancel",
        "/cancel [REASON]",
        "cancel the whole session (Ctrl-C cancels only a turn)",
        SESSION,
        0,
        1,
        True,
    ),
    Spec("sessions", "/sessions", "recent sessions, newest first", SESSION),
    Spec("attach", "/attach KEY", "follow another session here", SESSION, 1, 1, completes="sessions"),
    Spec(
        "agent",
        "/agent [Agent:NAME]",
        "this session's agent; with a name, a new session with it",
        SESSION,
        0,
        1,
    ),
    Spec("chat save", "/chat save TAG", "remember this session as TAG", SAVED, 1, 1, completes="tags"),
    Spec(
        "chat resume",
        "/chat resume TAG",
        "go back to the session saved as TAG",
        SAVED,
        1,
        1,
        completes="tags",
    ),
    Spec("chat list", "/chat list", "saved chats", SAVED),
    Spec(
        "chat delete",
        "/chat delete TAG",
        "forget a saved chat (the session stays)",
        SAVED,
        1,
        1,
        completes="tags",
    ),
    Spec(
        "chat share",
        "/chat share FILE.md|FILE.json",
        "write the transcript, tool calls and audit to a file",
        SAVED,
        1,
        1,
        completes="paths",
    ),
    Spec("tools", "/tools", "the tools agents may use, and their approval policies", OTHER),
    Spec("mcp", "/mcp", "MCP servers: their state and tools", OTHER),
    Spec(
        "graph run",
        "/graph run FILE",
        "run a task graph from a blueprint file (JSON)",
        OTHER,
        1,
        1,
        completes="paths",
    ),
    Spec("graph status", "/graph status [ID]", "a graph's tasks (default: the last one)", OTHER, 0, 1),
    Spec("settings", "/settings", "every setting, its value and where it comes from", OTHER),
    Spec(
        "settings reset",
        "/settings reset",
        "back to the defaults (your settings file is kept as a backup)",
        OTHER,
    ),
    Spec("help", "/help", "this list", OTHER),
    Spec("quit", "/quit", "leave (the session goes on; Ctrl-D too)", OTHER),
)
BY_NAME = {spec.name: spec for spec in SPECS}
FAMILIES = {name.split()[0] for name in BY_NAME}
"""First words of every command (`chat`, `status`, ...)."""
ALIASES = {"exit": "quit", "q": "quit", "?": "help"}


@dataclass(frozen=True)
class Word:
    text: str
    quoted: bool = False


@dataclass
class Invocation:
    """One command of a line: its spec and arguments, or why it cannot run (`error`)."""

    name: str
    args: list[str] = field(default_factory=list)
    spec: Spec | None = None
    error: str | None = None


def words(line: str) -> list[Word]:
    """The line's words; quotes group words and are removed (a lone quote is an ordinary character)."""
    found = []
    for match in WORD.finditer(line):
        double, single, bare = match.groups()
        if bare is not None:
            found.append(Word(bare))
        else:
            text = single if single is not None else re.sub(r"\\(.)", r"\1", double or "")
            found.append(Word(text, quoted=True))
    return found


def is_command(line: str) -> bool:
    """Whether a typed line is slash commands (`//...` is a message starting with `/`)."""
    text = line.lstrip()
    return text.startswith("/") and not text.startswith("//")


def parse(line: str) -> list[Invocation]:
    """The commands of a line that `is_command`."""
    groups: list[list[Word]] = []
    for word in words(line.strip()):
        starts = not word.quoted and COMMAND_WORD.fullmatch(word.text) is not None
        if starts and (not groups or _known(word.text[1:])):
            groups.append([word])
        elif groups:
            groups[-1].append(word)
    return [_invocation(group) for group in groups]


def closest(name: str, limit: int = 3) -> list[str]:
    """Known command names nearest to `name`: those it starts, else the most alike (a looser
    likeness only when nothing is much alike)."""
    names = sorted(FAMILIES)
    starting = [n for n in names if n.startswith(name) and name]
    if starting:
        return starting[:limit]
    return difflib.get_close_matches(name, names, n=limit, cutoff=0.7) or difflib.get_close_matches(
        name, names, n=1, cutoff=0.5
    )


def _known(name: str) -> bool:
    return name in FAMILIES or name in ALIASES


def _invocation(group: list[Word]) -> Invocation:
    head = group[0].text[1:]
    head = ALIASES.get(head, head)
    rest = group[1:]
    if head not in FAMILIES:
        near = closest(head)
        hint = f"did you mean {', '.join('/' + n for n in near)}?" if near else "type /help for the list"
        return Invocation(head, error=f"unknown command /{head}: {hint}")
    spec = BY_NAME.get(f"{head} {rest[0].text}") if rest and not rest[0].quoted else None
    if spec is not None:
        rest = rest[1:]
    else:
        spec = BY_NAME.get(head)
    if spec is None:
        subs = sorted(name.split()[1] for name in BY_NAME if name.startswith(f"{head} "))
        given = rest[0].text if rest else ""
        near = difflib.get_close_matches(given, subs, n=1, cutoff=0.5) if given else []
        hint = f"did you mean /{head} {near[0]}?" if near else f"say one of: {', '.join(subs)}"
        what = f"unknown /{head} command {given!r}" if given else f"/{head} needs a command"
        return Invocation(head, error=f"{what}: {hint}")
    args = [word.text for word in rest]
    if spec.rest and len(args) > spec.max_args:
        args = [*args[: spec.max_args - 1], " ".join(args[spec.max_args - 1 :])]
    if not spec.min_args <= len(args) <= spec.max_args:
        return Invocation(spec.name, args, spec, error=f"usage: {spec.usage}")
    return Invocation(spec.name, args, spec)
