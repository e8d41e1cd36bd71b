"""`@path`: what goes with a message. Files git ignores are skipped; a large or binary file goes as
an artifact; a folder gives its files, at most `attach_max_files`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cli.chat.attach import compose, gather, references


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "src").mkdir(parents=True)
    (folder / ".gitignore").write_text("*.log\nbuild/\n")
    (folder / "src" / "a.py").write_text("print('a')\n")
    (folder / "src" / "b.log").write_text("noise\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.txt").write_text("built\n")
    (folder / "big.txt").write_text("x" * 2000)
    (folder / "image.bin").write_bytes(b"\x89PNG\0\0data")
    return folder


def attached(repo: Path, line: str, **limits: int) -> tuple[dict[str, str], list[str]]:
    gathered = gather(
        references(line, repo),
        repo,
        inline_limit=limits.get("inline_limit", 1000),
        max_files=limits.get("max_files", 50),
    )
    return {f.shown: (f.why if f.artifact else "inline") for f in gathered.files}, gathered.skipped


@pytest.mark.parametrize("git", [True, False], ids=["git", "no git: the .gitignore read"])
def test_files_git_ignores_are_skipped(repo: Path, git: bool) -> None:
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    else:
        (repo / ".synapse").mkdir()  # a project without git: its .gitignore is read
    files, skipped = attached(repo, "look at @src and @build/out.txt")
    assert files == {"src/a.py": "inline"}
    assert sorted(skipped) == ["build/out.txt: ignored by git", "src/b.log: ignored by git"]


def test_large_and_binary_files_go_as_artifacts(repo: Path) -> None:
    files, skipped = attached(repo, "@big.txt @image.bin, @src/a.py.")
    assert files == {
        "big.txt": "over inline_limit_bytes=1000",
        "image.bin": "binary",
        "src/a.py": "inline",
    }
    assert skipped == []


def test_a_folder_gives_at_most_max_files(repo: Path) -> None:
    files, skipped = attached(repo, "@. please", max_files=2)
    assert len(files) == 2
    assert any("past attach_max_files=2" in s for s in skipped)


def test_missing_paths_are_said_and_inline_files_are_marked(repo: Path) -> None:
    gathered = gather(references("@nope.txt @src/a.py", repo), repo, inline_limit=1000, max_files=5)
    assert gathered.skipped == ["@nope.txt: no such file or folder"]
    assert compose("see", gathered.files, {}) == (
        "see\n\n--- @src/a.py (11 bytes) ---\nprint('a')\n--- end of @src/a.py ---"
    )


def test_a_link_out_of_the_trusted_folders_is_skipped(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("key\n")
    (repo / "src" / "key.txt").symlink_to(secret)
    (repo / "src" / "c.py").write_text("print('c')\n")
    refs = references("@src @src/c.py", repo)
    gathered = gather(refs, repo, inline_limit=1000, max_files=50, trusted=[str(repo)])
    assert [f.shown for f in gathered.files] == ["src/a.py", "src/b.log", "src/c.py"]  # sorted, once each
    assert gathered.skipped == [f"{secret}: outside your trusted folders (reached through a link)"]
