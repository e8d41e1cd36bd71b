"""The free rules, alone: which commands are worth running without approval, and why the others ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.tools.terminal.free import FreeRules

ALLOW = ["ls", "cat", "grep", "find", "date", "du"]


@pytest.fixture
def rules(tmp_path: Path) -> FreeRules:
    (tmp_path / "trusted" / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "trusted" / "out").symlink_to(tmp_path / "outside")
    return FreeRules(ALLOW, [tmp_path / "trusted"])


@pytest.mark.parametrize(
    ("command", "cwd", "why"),
    [
        ("ls -la", "trusted", None),
        ("cat sub/notes.txt", "trusted", None),
        ("grep -n 'a b' notes.txt", "trusted", None),
        ("ls ../trusted/sub", "trusted/sub", None),
        ("find . -name x", "trusted", None),
        ("find . -name x -delete", "trusted", "find -delete deletes what it finds: it can run other code"),
        ("find . -maxdepth 0 -fprintf pipe text", "trusted", "find -fprintf writes into the file it names"),
        ("find . -exec cat {} +", "trusted", "find -exec runs the program it is given"),
        ("ls --color=always .", "trusted/sub", None),
        ("rm -rf sub", "trusted", "`rm` is not on the read-only allowlist"),
        ("/bin/ls", "trusted", "`/bin/ls` is not on the read-only allowlist"),
        ("./ls", "trusted", "`./ls` is not on the read-only allowlist"),
        ("X=1 ls", "trusted", "`X=…` before the program sets its environment"),
        (
            "env ls",
            "trusted",
            "`env` runs the command it is given: it can run other code, so it asks every time",
        ),
        ("ls | cat", "trusted", "the command uses shell syntax"),
        ("ls > out", "trusted", "the command uses shell syntax"),
        ("ls *.txt", "trusted", "the command uses shell syntax"),
        ("ls [ab]", "trusted", "the command uses shell syntax"),
        ("cat $HOME/x", "trusted", "the command uses shell syntax"),
        ("ls # a comment", "trusted", "the command uses shell syntax"),
        ("cat 'unbalanced", "trusted", "the command cannot be split into words"),
        ("", "trusted", "the command cannot be split into words"),
        ("ls", "outside", "the terminal is in {root}/outside, outside the trusted folders"),
        ("ls", ".", "the terminal is in {root}, outside the trusted folders"),
        ("cat /etc/passwd", "trusted", "`/etc/passwd` is /etc/passwd, outside the trusted folders"),
        ("cat ../outside/x", "trusted", "`../outside/x` is {root}/outside/x, outside the trusted folders"),
        ("ls ..", "trusted", "`..` is {root}, outside the trusted folders"),
        ("ls out/", "trusted", "`out/` is {root}/outside, outside the trusted folders"),
        ("cat ~/.ssh/id_rsa", "trusted", "`~/.ssh/id_rsa` is"),
        ("grep --file=../outside/p x", "trusted", "`../outside/p` is {root}/outside/p, outside"),
        ("ls sub/../..", "trusted", "`sub/../..` is {root}, outside the trusted folders"),
        ("ls \u202e", "trusted", "the command contains a control character"),
        ("ls a\u2028b", "trusted", "the command contains a control character"),
        # a path glued to a short option is that option's value: checked like a word of its own
        ("date -f/etc/shadow", "trusted", "`/etc/shadow` is /etc/shadow, outside the trusted folders"),
        ("grep -f/etc/passwd x", "trusted", "`/etc/passwd` is /etc/passwd, outside the trusted folders"),
        ("du -X/etc/shadow", "trusted", "`/etc/shadow` is /etc/shadow, outside the trusted folders"),
        ("grep -rf/etc .", "trusted", "`/etc` is /etc, outside the trusted folders"),  # -r -f /etc
        ("grep -f../outside/p x", "trusted", "`../outside/p` is {root}/outside/p, outside"),
        ("grep -f.. x", "trusted", "`..` is {root}, outside the trusted folders"),
        ("ls -I~/x", "trusted", "`~/x` is"),
        ("grep -fout/p x", "trusted", "`out/p` is {root}/outside/p, outside"),
        ("grep -fsub/p x", "trusted", "`/p` is /p, outside"),  # -f -s -u -b /p, for all it knows
        ("grep -fsub/p -e. -n5 x", "trusted/sub", "`/p` is /p, outside"),
        ("grep -e. -n5 -C2 x", "trusted", None),
        ("grep -f./p -fsub x", "trusted", None),
        ("du -X.ignore .", "trusted", None),
        ("cat -- -f", "trusted", None),
    ],
)
def test_why_a_command_asks(
    rules: FreeRules, tmp_path: Path, command: str, cwd: str, why: str | None
) -> None:
    said = rules.why_not(command, tmp_path / cwd)
    if why is None:
        assert said is None, said
    else:
        assert said is not None and said.startswith(why.format(root=tmp_path)), said


def test_the_trusted_folder_of_a_symlinked_path_is_where_it_really_is(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    rules = FreeRules(ALLOW, [tmp_path / "alias"])
    assert rules.why_not("ls", tmp_path / "real") is None, "the trusted folder is resolved too"
    assert rules.why_not("ls", tmp_path / "alias") is None
