"""What in a terminal command can run other code, or write where it should not. Pure.

A person who approves `git status` "for this session" means `git status`, not
``git -c core.fsmonitor='…' status``: the program is the same, but the option makes git run another
program. `runs_code` names why a simple command's words can run code beyond its program and
subcommand (None: they cannot), and `head` is what a `session_prefix` grant may stand for: the
program and, for one with subcommands, its subcommand (`git status`), or for an interpreter its
script (`python manage.py`); nothing at all for a command that can run other code.

Flagged: `NAME=value` before the program (its environment: `GIT_*`, `LD_PRELOAD`, `PAGER`); programs
that run what they are given (`env`, `xargs`, `sudo`, `nice`, `timeout`, the shell's `exec`, `eval`,
`source`, ...) or change what later commands run (`alias`, `export`, `trap`, ...); pagers and `man`
(shell escapes); inline code (`sh -c`, `python -c`, `perl -e`, `vim -c`); the options in `OPTIONS`;
and what git, awk and sed read in their words (`languages`). It errs on the side of asking: a
look-alike it cannot tell apart (`find . -name -exec`, the comparison in `awk '$1 > 2'`) asks too.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from .languages import awk_runs, git_runs, option_in, sed_runs

ENVIRONMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")

RUNS_ANYTHING = {
    **dict.fromkeys(
        (
            "env xargs nice nohup timeout stdbuf setsid sudo doas su runuser pkexec chroot unshare "
            "nsenter ionice taskset chrt flock time watch strace ltrace gdb script parallel "
            "systemd-run busybox exec command builtin eval source . coproc fc npx uvx"
        ).split(),
        "runs the command it is given",
    ),
    **dict.fromkeys(
        "alias export declare typeset readonly hash enable trap bind complete".split(),
        "changes what later commands in the terminal run (aliases, environment, traps)",
    ),
    **dict.fromkeys("less more most pg man".split(), "has shell escapes (`!command`)"),
}
"""Programs that can run other code whatever their arguments, and why."""

SHELL = ("-c", "--init-file", "--rcfile")
VIM = frozenset("vi vim nvim view ex vimdiff".split())
INTERPRETERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys("sh bash dash zsh ksh mksh ash csh tcsh".split(), SHELL),
    "fish": ("-c", "-C", "--command", "--init-command"),
    "python": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "-p", "-r", "--eval", "--print", "--require", "--import", "--loader"),
    "php": ("-r", "-B", "-R", "-E", "-d"),
    "lua": ("-e",),
    "Rscript": ("-e",),
    **dict.fromkeys(VIM, ("-c", "-S", "-s", "-u", "-U", "--cmd")),
}
"""Programs that run a script, and their options that give code instead (`vim +cmd` too), found
anywhere among the words (one among the script's own arguments asks too)."""

SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys("git docker podman kubectl helm gh cargo go pip apt apt-get".split(), ()),
    "npm": ("exec", "x", "explore"),
    "pnpm": ("exec", "dlx"),
    "yarn": ("exec", "dlx"),
    "uv": ("run", "tool"),
    "poetry": ("run",),
}
"""Programs whose second word is a subcommand (a grant on `git status` is not one on `git push`),
and those of their subcommands that run the command they are given."""

RUNS_PROGRAM = "runs the program it is given"
OPTIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("find", ("-exec", "-execdir", "-ok", "-okdir"), RUNS_PROGRAM),
    ("find", ("-delete",), "deletes what it finds"),
    ("find", ("-fprint", "-fprint0", "-fprintf", "-fls"), "writes into the file it names (a named pipe too)"),
    ("tar", ("-I", "-F", "--to-command", "--use-compress-program", "--checkpoint-action"), RUNS_PROGRAM),
    ("tar", ("--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"), RUNS_PROGRAM),
    ("rsync", ("-e", "--rsh", "--rsync-path"), "runs the program it is given as its remote shell"),
    ("ssh", ("-F",), "reads a configuration that can run programs (ProxyCommand)"),
    ("scp", ("-F", "-S"), "runs a program, or reads a configuration that can (ProxyCommand)"),
    ("sftp", ("-F", "-S", "-D"), "runs a program, or reads a configuration that can (ProxyCommand)"),
    *(
        (
            apt,
            ("-o", "-c", "--option", "--config-file"),
            "sets configuration that can run programs (DPkg::Pre-Invoke)",
        )
        for apt in ("apt", "apt-get")
    ),
    ("cargo", ("--config",), "sets configuration that can run programs (a runner)"),
    ("go", ("-toolexec", "-exec", "--toolexec", "--exec"), RUNS_PROGRAM),
)
"""Options that run code or write where they should not, by program: a word giving one (with its
value, in a cluster of one-letter ones, or abbreviated: `languages.option_in`)."""

SSH_RUNS = re.compile(r"(proxy|local|knownhosts)command|\bmatch\b", re.IGNORECASE)
"""Settings of ssh, scp and sftp that run programs (ProxyCommand, LocalCommand, Match exec), looked
for in every word: `-o X`, `-oX` and `-vo X` alike."""

READERS: dict[str, Callable[[str, list[str]], str | None]] = {
    "git": git_runs,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), awk_runs),
    **dict.fromkeys(("sed", "gsed"), sed_runs),
}
"""Programs whose words are a little language of their own, read by `languages`."""


def runs_code(words: Sequence[str]) -> str | None:
    """Why a simple command (its words, the program first) can run code beyond its program and
    subcommand, in a few words naming what does (`git -c sets configuration that can run programs
    (core.fsmonitor, …)`); None when nothing in it can."""
    if not words:
        return None
    first, args = words[0], list(words[1:])
    if ENVIRONMENT.match(first):
        return (
            f"`{first.split('=', 1)[0]}=…` before the program sets its environment, which can make it "
            "run other programs (GIT_*, LD_PRELOAD, PAGER)"
        )
    program = _name(first)
    if program in RUNS_ANYTHING:
        return f"`{program}` {RUNS_ANYTHING[program]}"
    inline = INTERPRETERS.get(program, ())
    found = next((w for w in args if option_in(w, inline) or (program in VIM and w[:1] == "+")), None)
    if found is not None:
        return f"{program} {'+command' if found[:1] == '+' else found.split('=', 1)[0]} runs the code it is given"
    if args and args[0] in SUBCOMMANDS.get(program, ()):
        return f"{program} {args[0]} runs the command it is given"
    if program == "tar" and args and not args[0].startswith("-"):
        args[0] = f"-{args[0]}"  # old style: `tar xIf prog a.tar` is `tar -xIf ...`
    for named, options, why in OPTIONS:
        found = next((w for w in args if option_in(w, options)), None) if named == program else None
        if found is not None:
            return f"{program} {found.split('=', 1)[0]} {why}"
    if program in ("ssh", "scp", "sftp") and any(SSH_RUNS.search(word) for word in args):
        return f"{program} -o sets an option that runs programs (ProxyCommand, LocalCommand, Match exec)"
    reader = READERS.get(program)
    return reader(program, args) if reader is not None else None


def asks_every_time(why: str) -> str:
    """The reason a command that can run other code gives (`why`: `runs_code`'s)."""
    return f"{why}: it can run other code, so it asks every time (a grant or allow rule on its program does not cover it)"


def head(words: Sequence[str]) -> tuple[str, ...] | None:
    """The words a `session_prefix` grant on this command stands for: the program and its
    subcommand (`git status`), an interpreter and its script (`python manage.py`), else the program
    (`ls`). None when the command can run other code (`runs_code`), or when a program with
    subcommands or a script has an option first (in `git --no-pager log` the second word is no
    subcommand)."""
    if not words or runs_code(words) is not None:
        return None
    program = _name(words[0])
    if len(words) == 1 or (program not in SUBCOMMANDS and program not in INTERPRETERS):
        return (words[0],)
    second = words[1]
    if second.startswith("-") or (program in SUBCOMMANDS and not SUBCOMMAND.fullmatch(second)):
        return None
    return (words[0], second)


def _name(word: str) -> str:
    """The program a word names: `/usr/bin/git` is `git`, `python3.12` is `python`."""
    name = posixpath.basename(word)
    return "python" if re.fullmatch(r"python[0-9.]*", name) else "node" if name == "nodejs" else name
