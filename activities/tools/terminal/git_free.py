"""Read-only git without approval: which `git` commands may run free, and how they are run.

`git status`, `log`, `diff`, `show`, `branch` (listing) and `rev-parse` only read, but git runs
programs its configuration names: `core.fsmonitor` at every `status`, a pager, hooks, an external
diff, a `.gitattributes` filter or textconv driver. The system and global configuration are not in
the free sandbox (it shows no `/etc/gitconfig` and no home), so what is left is the repository's
own: a free git command runs only when every key there is one that names no program
(`SAFE_KEYS`) or one its command line overrides (`NEUTRALISED`); any other key (a filter, an
alias, an include) makes it ask, naming the key. It then runs as `git --no-pager
--no-optional-locks -c core.fsmonitor=false -c core.hooksPath=/dev/null ...` with `--no-ext-diff
--no-textconv` where the subcommand takes them (`free_words`), and still only in the read-only
sandbox, which is what makes even a missed case harmless.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

READ_ONLY = frozenset({"status", "log", "diff", "show", "branch", "rev-parse"})
"""The subcommands that run free (`branch` only to list)."""
BRANCH_LISTING = frozenset({"--list", "-l", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose"})
"""What `git branch` may be given and still only list (anything else may create, move or delete)."""
WRITING_OPTIONS = ("--output", "-o", "--ext-diff", "--textconv", "--open-files-in-pager", "-O")
"""Options of the read-only subcommands that write a file or run a program."""
DIFFING = frozenset({"log", "diff", "show"})
"""Subcommands that take `--no-ext-diff --no-textconv`."""
GUARDS = (
    "--no-pager",
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "safe.directory=*",
)
"""What every free git command starts with: no pager, no index refresh written, no fsmonitor, no
hooks (the repository may belong to another uid than the sandbox's: it is read, never written)."""
SAFE_KEYS = re.compile(
    r"core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks"
    r"|autocrlf|eol|safecrlf|quotepath|abbrev|compression|bigfilethreshold|checkstat|trustctime)"
    r"|remote\.[^=]+\.(url|pushurl|fetch|push|tagopt|prune|mirror)"
    r"|branch\.[^=]+\.(remote|pushremote|merge|rebase|description)"
    r"|user\.(name|email)|author\.(name|email)|committer\.(name|email)"
    r"|init\.defaultbranch|pull\.(rebase|ff)|push\.(default|autosetupremote)|fetch\.prune"
    r"|submodule\.[^=]+\.(url|active|branch)|gc\.(auto|autodetach)|color\.[a-z.]+|log\.(date|decorate)"
    r"|lfs\.repositoryformatversion"
)
"""Repository configuration that names no program and reads no other file."""
NEUTRALISED = re.compile(r"core\.(fsmonitor|hookspath|pager)|pager\.[^=]+|diff\.external")
"""Keys that name a program the free command line overrides (`GUARDS`, `--no-ext-diff`)."""
CONFIG_TIMEOUT = 5.0


def why_not(words: Sequence[str], cwd: Path, trusted: Sequence[Path]) -> str | None:
    """Why `git` with these `words` (after the program), run in `cwd`, needs approval; None: it runs
    free (with `free_words`)."""
    if not words or words[0].startswith("-"):
        return "git runs free only as `git <subcommand> ...` (options before the subcommand ask)"
    subcommand, rest = words[0], words[1:]
    if subcommand not in READ_ONLY:
        return (
            f"`git {subcommand}` is not one of git's read-only subcommands ({', '.join(sorted(READ_ONLY))})"
        )
    if subcommand == "branch" and any(word not in BRANCH_LISTING for word in rest):
        return "`git branch` runs free only to list branches (--list, -a, -r, -v)"
    for word in rest:
        if word == "--":
            break
        if any(word == option or word.startswith(f"{option}=") for option in WRITING_OPTIONS):
            return f"`{word}` makes git write a file or run a program"
    config = _config_of(cwd, trusted)
    if isinstance(config, str):
        return config
    for key in config:
        if not (SAFE_KEYS.fullmatch(key) or NEUTRALISED.fullmatch(key)):
            return (
                f"the repository's configuration sets `{key}`, which may name a program git would run "
                "or a file it would read"
            )
    return None


def free_words(words: Sequence[str]) -> list[str]:
    """`git <subcommand> ...` as it runs free: `GUARDS` first, no external diff or textconv."""
    program, subcommand, *rest = words
    diffing = ["--no-ext-diff", "--no-textconv"] if subcommand in DIFFING else []
    return [program, *GUARDS, subcommand, *diffing, *rest]


def _config_of(cwd: Path, trusted: Sequence[Path]) -> list[str] | str:
    """The keys of the repository's configuration `cwd` is in (none outside a repository), or why
    they cannot be read safely. Only the trusted folders are looked in: the sandbox shows no other."""
    git_dir = _git_dir(cwd.resolve(), trusted)
    if git_dir is None:
        return []
    if isinstance(git_dir, str):
        return git_dir
    keys: list[str] = []
    for config in (git_dir / "config", git_dir / "config.worktree"):
        if not config.is_file():
            continue
        try:
            done = subprocess.run(
                ["git", "config", "--file", str(config), "--no-includes", "--name-only", "--list"],
                capture_output=True,
                text=True,
                timeout=CONFIG_TIMEOUT,
                check=False,
                env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"},
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"the repository's configuration {config} could not be read ({err})"
        if done.returncode != 0:
            return f"the repository's configuration {config} could not be read: {done.stderr.strip()}"
        keys += [line.lower() for line in done.stdout.splitlines() if line]
    return keys


def _git_dir(cwd: Path, trusted: Sequence[Path]) -> Path | str | None:
    """The repository's git folder, looked for from `cwd` up to its trusted folder; None: none."""
    root = next((folder for folder in trusted if folder == cwd or folder in cwd.parents), None)
    if root is None:
        return None
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.exists():
            return f"{dot_git} is a link to a repository elsewhere (a worktree or submodule)"
        if folder == root:
            return None
    return None
