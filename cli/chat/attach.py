"""`@path` in a message: the files it names go with the message.

A file is put in the message's text between marker lines; a folder gives its files (sorted, at
most `attach_max_files`). Files git ignores are skipped (`git check-ignore`, or the project's
`.gitignore` read with pathspec where git cannot say). A file over `inline_limit_bytes`, a binary
one, or one that would take the message past the API's size limit is uploaded as an artifact
(`POST /artifacts`) and listed in the message's `artifacts`, with a warning. Whether a path may
be read at all (trusted folders) is the REPL's to ask before `gather`.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .places import project_root
from .trust import trusted_folder

REFERENCE = re.compile(r"(?<!\S)@((?:\\ |[^\s])+)")
MESSAGE_BUDGET = 60 * 1024
"""Bytes of text a message may carry inline (the API takes 64 KiB)."""
MAX_ARTIFACTS = 10
"""Artifacts one message may list."""
TRAILING = ",.;:!?)"


@dataclass(frozen=True)
class Reference:
    """One `@path` of a message: as typed, and the path it names (relative to the cwd)."""

    typed: str
    path: Path


@dataclass
class File:
    shown: str
    data: bytes
    artifact: bool = False
    why: str = ""
    """Why it goes as an artifact."""


@dataclass
class Gathered:
    files: list[File] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """What was left out, and why."""


def references(text: str, cwd: Path) -> list[Reference]:
    """The `@path`s of a message (`\\ ` is a space in a path; trailing punctuation is dropped
    when the path does not exist with it)."""
    found = []
    for match in REFERENCE.finditer(text):
        typed = match.group(1).replace("\\ ", " ")
        path = cwd / Path(typed).expanduser()
        if not path.exists() and typed.rstrip(TRAILING) != typed:
            typed = typed.rstrip(TRAILING)
            path = cwd / Path(typed).expanduser()
        found.append(Reference(typed, path))
    return found


def gather(
    refs: list[Reference], cwd: Path, *, inline_limit: int, max_files: int, trusted: list[str] | None = None
) -> Gathered:
    """Read the files the references name (see the module docstring for what goes how); with
    `trusted`, a file whose real path lies outside those folders (a link in a folder) is skipped."""
    gathered = Gathered()
    paths: list[tuple[str, Path]] = []
    for ref in refs:
        if not ref.path.exists():
            gathered.skipped.append(f"@{ref.typed}: no such file or folder")
        elif ref.path.is_dir():
            inside = sorted(
                p for p in ref.path.rglob("*") if p.is_file() and ".git" not in p.relative_to(ref.path).parts
            )
            paths += [(_shown(p, cwd), p) for p in inside]
        else:
            paths.append((_shown(ref.path, cwd), ref.path))
    unique: dict[Path, tuple[str, Path]] = {}
    for shown, path in paths:  # a file named twice goes once, where it was first named
        unique.setdefault(path.resolve(), (shown, path))
    paths = list(unique.values())
    ignored = git_ignored([path for _, path in paths])
    budget = MESSAGE_BUDGET
    for shown, path in paths:
        if trusted is not None and trusted_folder(path, trusted) is None:
            gathered.skipped.append(f"{shown}: outside your trusted folders (reached through a link)")
        elif path in ignored:
            gathered.skipped.append(f"{shown}: ignored by git")
        elif len(gathered.files) >= max_files:
            gathered.skipped.append(f"{shown}: past attach_max_files={max_files}")
        else:
            data = path.read_bytes()
            file = File(shown, data)
            if b"\0" in data[:8192]:
                file.artifact, file.why = True, "binary"
            elif len(data) > inline_limit:
                file.artifact, file.why = True, f"over inline_limit_bytes={inline_limit}"
            elif len(data) > budget:
                file.artifact, file.why = True, "the message would be too large"
            else:
                budget -= len(data)
            gathered.files.append(file)
    uploads = [f for f in gathered.files if f.artifact]
    for extra in uploads[MAX_ARTIFACTS:]:
        gathered.files.remove(extra)
        gathered.skipped.append(f"{extra.shown}: a message takes at most {MAX_ARTIFACTS} artifacts")
    return gathered


def compose(text: str, files: list[File], artifact_ids: dict[str, str]) -> str:
    """The message: the text, then each inline file between marker lines (see `sharelog.ATTACHED`),
    then a line for each file sent as an artifact."""
    parts = [text]
    for file in files:
        if file.artifact:
            parts.append(
                f"--- @{file.shown} ({len(file.data)} bytes): attached as {artifact_ids[file.shown]} ---"
            )
        else:
            body = file.data.decode("utf-8", errors="replace")
            parts.append(
                f"--- @{file.shown} ({len(file.data)} bytes) ---\n{body.rstrip(chr(10))}\n--- end of @{file.shown} ---"
            )
    return "\n\n".join(parts)


def git_ignored(paths: list[Path]) -> set[Path]:
    """Which of the paths git ignores (in each one's repository); the project's `.gitignore`
    where git cannot tell (no git, or not a repository)."""
    ignored: set[Path] = set()
    by_root: dict[Path, list[Path]] = {}
    for path in paths:
        by_root.setdefault(project_root(path.resolve().parent), []).append(path)
    for root, inside in by_root.items():
        found = _git_check_ignore(root, inside)
        ignored |= found if found is not None else _gitignore_file(root, inside)
    return ignored


def _git_check_ignore(root: Path, paths: list[Path]) -> set[Path] | None:
    if not (root / ".git").exists():
        return None
    names = "\0".join(str(p.resolve()) for p in paths) + "\0"
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-z", "--stdin"],
            input=names.encode(),
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode not in (0, 1):
        return None
    said = {Path(name) for name in done.stdout.decode().split("\0") if name}
    return {p for p in paths if p.resolve() in said}


def _gitignore_file(root: Path, paths: list[Path]) -> set[Path]:
    rules = root / ".gitignore"
    if not rules.is_file():
        return set()
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(rules.read_text(encoding="utf-8", errors="replace").splitlines())
    return {p for p in paths if spec.match_file(str(p.resolve().relative_to(root)))}


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return str(path.resolve())
