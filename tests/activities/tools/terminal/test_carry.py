"""What comes back out of a sandbox: a folder and exports, applied by a real bash, and never run."""

from __future__ import annotations

import shlex
import subprocess
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from activities.tools.terminal.carry import KEPT_IN, NAME, Carried, Overlay, read


def state(before: dict[str, str], cwd: str, after: dict[str, str]) -> bytes:
    """A state file as the sandbox's bash writes it (`sandbox.INNER`)."""
    return _entries(before) + b"\0" + cwd.encode() + b"\0" + _entries(after)


def _entries(env: dict[str, str]) -> bytes:
    return b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items())


def test_the_folder_goes_to_the_shell_and_the_exports_to_later_sandboxes() -> None:
    carried = read(
        state(
            {"PATH": "/usr/bin", "GONE": "1", "KEPT": "same", "PWD": "/a", "SHLVL": "1"},
            "/srv/app",
            {
                "PATH": "/usr/bin:/opt",
                "KEPT": "same",
                "NEW": "it's $(x)",
                "PWD": "/b",
                "__synapse_command": "x",
            },
        )
    )
    assert carried == Carried(
        cwd="/srv/app", exports={"PATH": "/usr/bin:/opt", "NEW": "it's $(x)"}, unsets=["GONE"]
    )
    assert carried.cd() == "builtin cd -P -- /srv/app 2>/dev/null\n", "the only thing the shell outside reads"
    overlay = Overlay()
    overlay.take(carried)
    overlay.take(Carried(exports={"GONE": "back"}, unsets=["NEW"]))
    assert overlay.script() == "export -- PATH=/usr/bin:/opt\nunset -v -- NEW\nexport -- GONE=back\n"
    control = read(state({"A": "1"}, "/x\x15y", {"A": "a\x15touch pwned\r"}))
    assert control.cd() == "builtin cd -P -- '/x\x15y' 2>/dev/null\n", "read by `source`, never typed"


def test_a_folder_that_is_not_one_absolute_line_is_not_gone_to() -> None:
    assert read(state({"A": "1"}, "x\n/srv/work", {"A": "1"})).cd() is None
    assert read(state({"A": "1"}, "relative/dir", {"A": "1"})).cd() is None


def test_a_command_killed_before_its_end_carries_nothing() -> None:
    assert read(b"") == Carried() and read(b"A=1\0B=2\0") == Carried()
    assert read(b"A=1\0\0") == Carried(), "the separator written, the end never"
    assert Carried().cd() is None and Overlay().script() == ""


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
def test_the_next_sandbox_starts_with_exactly_the_carried_exports_and_runs_nothing(
    before: dict[str, str], after: dict[str, str], cwd: str
) -> None:
    """Against a reference model: the next sandbox's variables become `after` for every name that may
    be carried, stay as they were for the others; a value is data, never code."""
    carried = read(state(before, cwd, after))
    changed = {*carried.exports, *carried.unsets}
    assert not {name for name in changed if KEPT_IN.fullmatch(name) or not NAME.fullmatch(name)}
    overlay = Overlay()
    overlay.take(carried)
    script = overlay.script()
    start = {k: v for k, v in before.items() if NAME.fullmatch(k)}
    may = {k for k in {*before, *after} if NAME.fullmatch(k) and not KEPT_IN.fullmatch(k)}
    expected = {k: v for k, v in start.items() if k not in may} | {k: v for k, v in after.items() if k in may}
    probe = (  # as the sandbox's own: its IFS, whatever the variables set
        "__p() { local __probe IFS=$' \\t\\n'; for __probe in $(compgen -e); do "
        'printf "%s=%s\\0" "$__probe" "${!__probe}"; done; }; __p'
    )
    # the sandbox's bash starts clean and takes the shell's exports by `source` (`export -p`): so
    # does this one (a BASH_ENV among them must not run a file at start-up)
    exports = "".join(f"export -- {name}={shlex.quote(value)}\n" for name, value in start.items())
    with (
        tempfile.NamedTemporaryFile("w", suffix=".sh") as apply,
        tempfile.NamedTemporaryFile("w", suffix=".sh") as shell,
    ):  # read by `source`, as the sandbox does
        apply.write(script)
        apply.flush()
        shell.write(exports)
        shell.flush()
        done = subprocess.run(
            [
                "bash",
                "--noprofile",
                "--norc",
                "-c",
                f"builtin source -- {shell.name}\nbuiltin source -- {apply.name}\n{probe}",
            ],
            env={},
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
    """The variables a sandboxed command may carry (a bash's own are its business)."""
    return {k: v for k, v in env.items() if not KEPT_IN.fullmatch(k)}
