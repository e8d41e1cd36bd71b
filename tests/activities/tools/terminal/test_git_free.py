"""Read-only git runs free, safely: which git commands run without approval, and that a repository's
own configuration (an fsmonitor, a hook, a pager, a filter) runs nothing when they do."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.tools.terminal.free import FreeRules

from .sandboxing import Bench, bench

MARKS = ("FSMONITOR-RAN", "HOOK-RAN", "PAGER-RAN", "TEXTCONV-RAN", "DIFF-RAN")
"""What the repository's programs print when git runs them."""


def git(repo: Path, *words: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *words],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def repository(folder: Path) -> Path:
    """A repository with one commit of `a.txt` and `a.txt` changed since."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "a.txt").write_text("one\n")
    git(folder, "add", "a.txt")
    git(folder, "commit", "-qm", "first")
    (folder / "a.txt").write_text("one\ntwo\n")
    return folder


@pytest.fixture
def trusted(tmp_path: Path) -> Path:
    return repository(tmp_path / "trusted")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("git status", None),
        ("git status --short", None),
        ("git log -3", None),
        ("git log --oneline --stat", None),
        ("git diff --stat", None),
        ("git diff HEAD~0 -- a.txt", None),
        ("git show HEAD", None),
        ("git branch", None),
        ("git branch --list -v", None),
        ("git branch -a", None),
        ("git rev-parse HEAD", None),
        ("git branch topic", "`git branch` runs free only to list branches"),
        ("git branch -D main", "`git branch` runs free only to list branches"),
        ("git commit -m x", "`git commit` is not one of git's read-only subcommands"),
        ("git config core.pager", "git config sets configuration that can run programs"),
        ("git stash list", "`git stash` is not one of git's read-only subcommands"),
        ("git --no-pager log", "options before the subcommand ask"),
        ("git -C sub status", "options before the subcommand ask"),
        ("git", "git runs free only as `git <subcommand> ...`"),
        ("git log --output=log.txt", "`--output=log.txt` makes git write a file or run a program"),
        ("git log -o log.txt", "`-o` makes git write a file or run a program"),
        ("git diff --ext-diff", "`--ext-diff` makes git write a file or run a program"),
        ("git show --textconv HEAD:a.txt", "`--textconv` makes git write a file or run a program"),
        ("git log -- --output=x", None),
        ("git diff ../elsewhere", "outside the trusted folders"),
    ],
)
def test_which_git_commands_run_free(trusted: Path, command: str, why: str | None) -> None:
    said = FreeRules(["git"], [trusted]).why_not(command, trusted)
    assert (said is None) if why is None else (said is not None and why in said), said


@pytest.mark.parametrize(
    ("key", "value", "free"),
    [
        ("core.fsmonitor", "echo FSMONITOR-RAN", True),
        ("core.hooksPath", "hooks", True),
        ("core.pager", "echo PAGER-RAN", True),
        ("pager.log", "echo PAGER-RAN", True),
        ("diff.external", "echo DIFF-RAN", True),
        ("remote.origin.url", "https://example.org/r.git", True),
        ("user.name", "someone", True),
        ("filter.lfs.clean", "echo FILTER-RAN", False),
        ("diff.txt.textconv", "echo TEXTCONV-RAN", False),
        ("alias.st", "!echo ALIAS-RAN", False),
        ("include.path", "../elsewhere.cfg", False),
        ("core.sshCommand", "echo SSH-RAN", False),
        ("core.worktree", "/", False),
        ("gpg.program", "echo GPG-RAN", False),
    ],
)
def test_a_repository_that_names_a_program_asks_unless_the_command_line_overrides_it(
    trusted: Path, key: str, value: str, free: bool
) -> None:
    git(trusted, "config", key, value)
    said = FreeRules(["git"], [trusted]).why_not("git status", trusted)
    if free:
        assert said is None, said
    else:
        assert said is not None and f"`{key.lower()}`" in said, said


def test_a_linked_repository_asks(tmp_path: Path) -> None:
    """A worktree's `.git` file points elsewhere: its configuration is not read, so git asks."""
    main = repository(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    said = FreeRules(["git"], [tmp_path / "linked"]).why_not("git status", tmp_path / "linked")
    assert said is not None and "a repository elsewhere" in said


def test_outside_a_repository_git_is_free_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert FreeRules(["git"], [tmp_path / "plain"]).why_not("git status", tmp_path / "plain") is None


@pytest.fixture
async def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Bench]:
    """A terminal whose trusted folder is a repository configured to run programs at every turn."""
    at = bench(tmp_path, monkeypatch)
    repository(at.work)
    hooks = at.work / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "pre-commit", "post-checkout"):
        (hooks / name).write_text("#!/bin/sh\necho HOOK-RAN >&2\n")
        (hooks / name).chmod(0o755)
    for key, value in {
        "core.fsmonitor": "echo FSMONITOR-RAN >&2; false",
        "core.hooksPath": str(hooks),
        "core.pager": "echo PAGER-RAN",
        "pager.log": "echo PAGER-RAN",
        "diff.external": "echo DIFF-RAN",
    }.items():
        git(at.work, "config", key, value)
    yield at
    await at.close()


@pytest.mark.parametrize(
    ("command", "shows"),
    [
        ("git status --short", " M a.txt"),
        ("git status", "modified:   a.txt"),
        ("git log -1 --format=%s", "first"),
        ("git diff", "+two"),
        ("git show --stat HEAD", "a.txt | 1 +"),
        ("git branch --list", "* main"),
        ("git rev-parse --abbrev-ref HEAD", "main"),
    ],
)
async def test_read_only_git_runs_free_and_the_repositorys_programs_do_not_run(
    hostile: Bench, command: str, shows: str
) -> None:
    before = hostile.untouched()
    result = await hostile.free(command)
    assert result is not None, f"{command!r} asked"
    assert result.metadata["sandbox"] == "trusted-read-only"
    output = result.content["output"]
    assert result.ok and shows in output, output
    assert not any(mark in output for mark in MARKS), output
    assert hostile.untouched() == before, "nothing in the trusted folder changed"
