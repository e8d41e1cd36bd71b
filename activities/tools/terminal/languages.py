"""The little languages a command's words carry, read for what can run other code. Pure.

git's options and subcommands (`git -c`, an alias), awk programs (`system()`, pipes, redirections)
and sed scripts (`e`, `w`, `s///e`); and how options are written (clusters, abbreviations), which
`code.runs_code` reads too. Each reader errs on the side of asking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

GIT_COMMANDS = frozenset(
    (
        "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore "
        "check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean clone column "
        "commit commit-graph commit-tree count-objects describe diff diff-files diff-index diff-tree "
        "difftool fetch for-each-ref format-patch fsck gc get-tar-commit-id grep hash-object init "
        "interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit merge merge-base "
        "merge-file merge-tree mergetool mktag mktree mv name-rev notes pack-objects pack-refs patch-id "
        "prune pull push range-diff read-tree rebase reflog remote repack replace rerere reset restore "
        "rev-list rev-parse revert rm shortlog show show-branch show-ref sparse-checkout stash status "
        "stripspace submodule switch symbolic-ref tag unpack-objects update-index update-ref var "
        "verify-commit verify-pack verify-tag version whatchanged worktree write-tree"
    ).split()
)
"""git's own commands that run nothing but git (an alias can never take their names); any other
second word may be an alias (`!sh -c …`) or a `git-<name>` program."""

GIT_VALUES = frozenset(("-C", "--work-tree", "--namespace", "--super-prefix", "--attr-source"))
"""git's options (before the subcommand) that may take the next word as their value."""

GIT_OPTIONS = (
    (("rebase", "difftool"), ("-x", "--exec", "--extcmd"), "runs the command it is given"),
    (("bisect",), ("run",), "runs the command it is given"),
    (("submodule",), ("foreach",), "runs the command it is given"),
    (("grep",), ("-O", "--open-files-in-pager"), "runs the pager it is given"),
    (("clone", "fetch", "pull", "ls-remote"), ("--upload-pack",), "runs the program it is given"),
    (("clone",), ("-u",), "runs the program it is given"),
    (("push",), ("--receive-pack", "--exec"), "runs the program it is given"),
    (("archive",), ("--exec",), "runs the program it is given"),
    (("clone", "init"), ("--template",), "copies in hooks, which run programs"),
    (("clone",), ("-c", "--config"), "sets configuration that can run programs (core.fsmonitor)"),
)
"""What a subcommand's words can run: options (clusters and abbreviations count) and words."""
GIT_CONFIG = "sets configuration that can run programs (core.fsmonitor, core.pager, alias.*)"

AWK_RUNS = re.compile(r"system\s*\(|\||>|@load")
"""`system()`, a pipe to or from a command (`"cmd" | getline`), output redirected into a file."""
AWK_FILES = "fEilWdop"
"""awk's options that read code from a file or load an extension (`-f`, `-i`, `-l`, mawk's `-W exec`),
or write a file (`-d`, `-o`, `-p`)."""
AWK_LONG = ("file", "exec", "include", "load", "dump-variables", "pretty-print", "profile")
SED_FLAGS = re.compile(r"[^;\n}#]*")
SED_FILE = "runs a script file, which can run commands (e) or write files (w)"
UNREADABLE = "script could not be read whole (a regex or `s` left open): it may run commands (e)"


def git_runs(program: str, args: list[str]) -> str | None:
    """Why git's options or subcommand can run other code (`-c`, an alias, `rebase -x`)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        name = word.split("=", 1)[0]
        if word.startswith("-c") or name == "--config-env":
            return f"{program} {name} {GIT_CONFIG}"
        if name == "--exec-path" and "=" in word:
            return f"{program} --exec-path= makes git run its commands from another folder"
        if name == "--git-dir":
            return f"{program} --git-dir reads another repository's configuration and hooks, which can run programs"
        i += 2 if word in GIT_VALUES else 1
    if i >= len(args):
        return None
    command, rest = args[i], args[i + 1 :]
    if command == "config":
        return f"{program} config {GIT_CONFIG}"
    if command not in GIT_COMMANDS:
        return (
            f"`{program} {command}` is not a git command known to run nothing else: an alias or a "
            f"`git-{command}` program can run anything"
        )
    for commands, options, why in GIT_OPTIONS:
        found = next((w for w in rest if option_in(w, options)), None) if command in commands else None
        if found is not None:
            return f"{program} {command} {found.split('=', 1)[0]} {why}"
    return None


def awk_runs(program: str, args: list[str]) -> str | None:
    """Why an awk command can run commands or write files: a program file, an extension, or a
    program text with `system()`, a pipe or `>` (a comparison `$1 > 2` asks too)."""
    texts: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        word = args[i]
        i += 1
        if word == "--":
            break
        if word.startswith("--"):
            if long_option(word, AWK_LONG):
                return f"{program} {word.split('=', 1)[0]} reads code from a file or an extension, or writes a file"
            separate = "=" not in word and long_option(word, ("source", "field-separator", "assign"))
            given = args[i : i + 1] if separate else word.split("=", 1)[1:]
            i += 1 if separate else 0
            texts += given if long_option(word, ("source",)) else []
            continue
        for at, letter in enumerate(word[1:], 2):
            if letter in AWK_FILES:
                return f"{program} -{letter} reads code from a file or an extension, or writes a file"
            if letter in "eFv":  # the rest of the word, or the next one, is its value
                given = [word[at:]] if word[at:] else args[i : i + 1]
                i += 0 if word[at:] else 1
                texts += given if letter == "e" else []
                break
    if not texts and i < len(args):
        texts.append(args[i])
    if any(AWK_RUNS.search(text) for text in texts):
        return f"the {program} program uses system(), a pipe or `>`: it can run commands or write files"
    return None


def sed_runs(program: str, args: list[str]) -> str | None:
    """Why a sed command can run commands or write files: a script file, or a script with `e`,
    `w`, `W` or the `e`/`w` flag of `s` (GNU sed runs `e`'s command)."""
    scripts: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positional += args[i:]
            break
        if word.startswith("--"):
            if long_option(word, ("file",)):
                return f"{program} --file {SED_FILE}"
            separate = "=" not in word and long_option(word, ("expression", "line-length"))
            given = args[i : i + 1] if separate else word.split("=", 1)[1:]
            i += 1 if separate else 0
            scripts += given if long_option(word, ("expression",)) else []
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], 2):
                if letter == "f":
                    return f"{program} -f {SED_FILE}"
                if letter in "eil":  # the rest of the word is its value (`-i`: only that)
                    given = [word[at:]] if word[at:] or letter == "i" else args[i : i + 1]
                    i += 0 if word[at:] or letter == "i" else 1
                    scripts += given if letter == "e" else []
                    break
        else:
            positional.append(word)
    return next(
        (f"{program} {why}" for why in map(_sed_script, scripts or positional[:1]) if why is not None), None
    )


def _sed_script(script: str) -> str | None:
    """What in a sed script runs a command or writes a file (None: nothing)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!,~+$" or c.isdigit():
            i += 1
        elif c == "#":
            i = _end(script, i, "\n")
        elif c in "/\\":  # a regex address: /re/ or \cREc
            start = i + 1 if c == "/" else i + 2
            i = _delimited(script, start, "/" if c == "/" else script[i + 1 : i + 2], regex=True)
            if i < 0:
                return UNREADABLE
            i = i + 1 if i < n and script[i] in "IM" else i
        elif c in "ewW":
            return f"`{c}` {'runs a command' if c == 'e' else 'writes a file'}"
        elif c in "sy":
            delim = script[i + 1 : i + 2]
            if not delim or delim in "\\\n":
                return UNREADABLE
            i = _delimited(script, i + 2, delim, regex=c == "s")
            i = _delimited(script, i, delim, regex=False) if i >= 0 else i
            if i < 0:
                return UNREADABLE
            flags = SED_FLAGS.match(script, i)
            found = flags.group() if flags else ""
            if c == "s" and ("e" in found or "w" in found):
                return f"`s///{'e' if 'e' in found else 'w'}` {'runs a command' if 'e' in found else 'writes a file'}"
            i += len(found)
        elif c in "aic":  # text: to a newline no backslash escapes (`a\` and its lines)
            i = _text_end(script, i + 1)
        elif c in "rR":  # a file to read: the rest of the line
            i = _end(script, i, "\n")
        elif c in "btT:":  # a label: to the end of the line or a `;`
            i = _end(script, i, ";\n")
        else:
            i += 1
    return None


def _end(script: str, i: int, stops: str) -> int:
    while i < len(script) and script[i] not in stops:
        i += 1
    return i


def _text_end(script: str, i: int) -> int:
    while i < len(script) and script[i] != "\n":
        i += 2 if script[i] == "\\" else 1
    return i


def _delimited(script: str, i: int, delim: str, *, regex: bool) -> int:
    """Where the part that starts at `i` ends, just past its `delim` (-1: it never does)."""
    n = len(script)
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
        elif c == delim:
            return i + 1
        elif regex and c == "[":  # a bracket expression may hold the delimiter
            j = i + 1 + (script[i + 1 : i + 2] == "^")
            j += script[j : j + 1] == "]"
            close = script.find("]", j)
            i = close + 1 if close >= 0 else n
        else:
            i += 1
    return -1


def option_in(word: str, options: Sequence[str]) -> bool:
    """Whether `word` gives one of `options`: itself or with a value (`-exec`, `--exec=x`), a short
    cluster or attached value holding a one-letter one (`-ix`, `-Ozstd`), an abbreviated long one
    (`--ex`), or a plain word (`run`)."""
    name = word.split("=", 1)[0]
    if name in options:
        return True
    letters = "".join(o[1] for o in options if len(o) == 2 and o[0] == "-")
    if letters and word.startswith("-") and not word.startswith("--") and any(c in letters for c in word[1:]):
        return True
    return long_option(word, [o[2:] for o in options if o.startswith("--")])


def long_option(word: str, names: Sequence[str]) -> bool:
    """`--name`, `--name=value`, or an abbreviation of one (getopt takes any unambiguous one)."""
    if not word.startswith("--") or len(word) == 2:
        return False
    given = word[2:].split("=", 1)[0]
    return any(name.startswith(given) for name in names)
