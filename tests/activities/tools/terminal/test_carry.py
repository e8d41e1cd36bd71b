"""What comes back out of a sandbox: a folder and exports, applied by a real bash, and never run."""

from __future__ import annotations

import subprocess
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from activities.tools.terminal.carry import KEPT_IN, NAME, Carried, read


def state(before: dict[str, str], cwd: str, after: dict[str, str]) -> bytes:
    """A state file as the sandbox's bash writes it (`sandbox.INNER`)."""
    return _entries(before) + b"\0" + cwd.encode() + b"\0" + _entries(after)


def _entries(env: dict[str, str]) -> bytes:
    return b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items())


def test_changes_are_carried_and_what_steers_the_shell_is_not() -> None:
    carried = read(
        state(
            {"PATH": "/usr/bin", "GONE": "1", "KEPT": "same", "PWD": "/a"},
            "/srv/app",
            {
                "PATH": "/usr/bin:/opt",
                "KEPT": "same",
                "NEW": "it's $(x)",
                "PROMPT_COMMAND": "evil",
                "LD_PRELOAD": "/x.so",
                "PWD": "/b",
            },
        )
    )
    assert carried == Carried(cwd="/srv/app", exports={"NEW": "it's $(x)"}, unsets=["GONE"])
    assert carried.script() == (
        "builtin cd -- /srv/app 2>/dev/null\nexport -- 'NEW=it'\"'\"'s $(x)'\nunset -v -- GONE\n"
    )
    control = read(state({"A": "1"}, "/x\x15y", {"A": "a\x15touch pwned\r"}))
    assert control.script() == "builtin cd -- '/x\x15y' 2>/dev/null\nexport -- 'A=a\x15touch pwned\r'\n", (
        "control characters stay data: the script is read by `source`, never typed"
    )


def test_a_command_killed_before_its_end_carries_nothing() -> None:
    assert read(b"") == Carried() and read(b"A=1\0B=2\0") == Carried()
    assert read(b"A=1\0\0") == Carried(), "the separator written, the end never"
    assert Carried().script() is None


names = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
    st.sampled_from(
        ["PROMPT_COMMAND", "PS1", "BASH_ENV", "LD_PRELOAD", "IFS", "PWD", "SHLVL", "A-B", "1X", "HISTFILE"]
    ),
)
values = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), max_size=12)
envs = st.dictionaries(names, values, max_size=6)


@settings(max_examples=150, deadline=None)
@given(before=envs, after=envs, cwd=st.sampled_from(["", "/", "/usr", "/no such folder"]))
def test_a_real_bash_ends_with_exactly_the_carried_exports_and_runs_nothing(
    before: dict[str, str], after: dict[str, str], cwd: str
) -> None:
    """Against a reference model: the shell's variables become `after` for every name that may be
    carried, stay as they were for the others; a value is data, never code."""
    carried = read(state(before, cwd, after))
    changed = {*carried.exports, *carried.unsets}
    assert not {name for name in changed if KEPT_IN.fullmatch(name) or not NAME.fullmatch(name)}
    script = carried.script() or ""
    start = {k: v for k, v in before.items() if NAME.fullmatch(k)}
    may = {k for k in {*before, *after} if NAME.fullmatch(k) and not KEPT_IN.fullmatch(k)}
    expected = {k: v for k, v in start.items() if k not in may} | {k: v for k, v in after.items() if k in may}
    probe = 'for __probe in $(compgen -e); do printf "%s=%s\\0" "$__probe" "${!__probe}"; done'
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as apply:  # read by `source`, as the tool does
        apply.write(script)
        apply.flush()
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", f"builtin source -- {apply.name}\n{probe}"],
            env=start,
            capture_output=True,
            cwd="/tmp",
            check=False,
        )
    got = {}
    for entry in done.stdout.split(b"\0"):
        name, sep, value = entry.decode().partition("=")
        if sep:
            got[name] = value
    assert _ours(got) == _ours(expected), (script, done.stderr)
    assert b"command not found" not in done.stderr, "a value was run"


def _ours(env: dict[str, str]) -> dict[str, str]:
    """The variables a sandboxed command may change (the shell's own are the shell's business)."""
    return {k: v for k, v in env.items() if not KEPT_IN.fullmatch(k)}
