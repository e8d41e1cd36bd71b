"""What in a command can run other code: a table of what asks (and why, as people read it) and of
harmless look-alikes that keep their head, and properties: a flagged option anywhere after its
program always takes the head away, and a head is always the command's first words."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activities.tools.terminal.code import head, runs_code

RUNS = [
    # (command, how the reason starts)
    (
        "git -c core.fsmonitor='sysctl -w fs.lease-break-time=46' status",
        "git -c sets configuration that can run programs (core.fsmonitor",
    ),
    ("git --config-env=core.pager=PAGER log", "git --config-env sets configuration that can run programs"),
    ("git --no-pager -c alias.st='!sh' st", "git -c sets configuration"),
    ("git --exec-path=/tmp/bin status", "git --exec-path= makes git run its commands from another folder"),
    (
        "git --git-dir=/tmp/evil.git status",
        "git --git-dir reads another repository's configuration and hooks",
    ),
    ("git --git-dir /tmp/evil.git log", "git --git-dir reads"),
    ("git st", "`git st` is not a git command known to run nothing else: an alias or a `git-st` program"),
    ("git lfs pull", "`git lfs` is not a git command known to run nothing else"),
    ("git config core.pager 'sh -c x'", "git config sets configuration that can run programs"),
    ("git rebase -x 'make test' main", "git rebase -x runs the command it is given"),
    ("git rebase --exe=true main", "git rebase --exe runs the command it is given"),
    ("git bisect run ./probe", "git bisect run runs the command it is given"),
    ("git submodule foreach ls", "git submodule foreach runs the command it is given"),
    ("git clone --upload-pack=sh https://x/r", "git clone --upload-pack runs the program it is given"),
    ("git push --receive-pack=sh origin", "git push --receive-pack runs the program it is given"),
    ("git grep -O vim x", "git grep -O runs the pager it is given"),
    ("git clone -c core.fsmonitor=x https://x/r", "git clone -c sets configuration"),
    ("GIT_SSH_COMMAND='sh -c x' git fetch", "`GIT_SSH_COMMAND=…` before the program sets its environment"),
    ("LD_PRELOAD=/tmp/x.so ls", "`LD_PRELOAD=…` before the program sets its environment"),
    ("find . -exec rm {} ;", "find -exec runs the program it is given"),
    ("find . -execdir sh -c x ;", "find -execdir runs the program it is given"),
    ("find . -ok rm {} ;", "find -ok runs the program it is given"),
    ("find . -okdir rm {} ;", "find -okdir runs the program it is given"),
    ("find . -name x -delete", "find -delete deletes what it finds"),
    ("find . -fprint pipe", "find -fprint writes into the file it names (a named pipe too)"),
    ("find . -fprint0 pipe", "find -fprint0 writes into the file it names"),
    ("find . -maxdepth 0 -fprintf pipe text", "find -fprintf writes into the file it names"),
    ("find . -fls pipe", "find -fls writes into the file it names"),
    ("find . -name -exec", "find -exec runs"),  # find reads it as the name's pattern: asking is the safe side
    ("awk 'BEGIN{system(\"id\")}'", "the awk program uses system(), a pipe or `>`"),
    ("gawk '{print | \"sh\"}' f", "the gawk program uses system(), a pipe or `>`"),
    ("mawk '{print > \"out\"}' f", "the mawk program uses system(), a pipe or `>`"),
    ("awk 'BEGIN{\"date\" | getline d}'", "the awk program uses system()"),
    ("awk -F: -e 'BEGIN{system(\"x\")}'", "the awk program uses system()"),
    ("awk -f prog.awk data", "awk -f reads code from a file or an extension"),
    ("awk '$1 > 2' f", "the awk program uses system(), a pipe or `>`"),  # a comparison asks too
    ("env ls", "`env` runs the command it is given"),
    ("xargs rm", "`xargs` runs the command it is given"),
    ("sh -c 'id'", "sh -c runs the code it is given"),
    ("bash -lc 'id'", "bash -lc runs the code it is given"),
    ("zsh -c id", "zsh -c runs the code it is given"),
    ("nice ls", "`nice` runs the command it is given"),
    ("nohup ./job", "`nohup` runs the command it is given"),
    ("timeout 5 ls", "`timeout` runs the command it is given"),
    ("stdbuf -oL ls", "`stdbuf` runs the command it is given"),
    ("setsid ./job", "`setsid` runs the command it is given"),
    ("sudo ls", "`sudo` runs the command it is given"),
    ("exec ls", "`exec` runs the command it is given"),
    ("command ls", "`command` runs the command it is given"),
    ("builtin cd", "`builtin` runs the command it is given"),
    ("eval ls", "`eval` runs the command it is given"),
    ("source env.sh", "`source` runs the command it is given"),
    (". env.sh", "`.` runs the command it is given"),
    ("export PAGER=x", "`export` changes what later commands in the terminal run"),
    ("python -c 'print(1)'", "python -c runs the code it is given"),
    ("python3.12 -Ic 'print(1)'", "python -Ic runs the code it is given"),
    ("perl -pe 's/a/b/' f", "perl -pe runs the code it is given"),
    ("ruby -e 'p 1'", "ruby -e runs the code it is given"),
    ("node --eval 'x'", "node --eval runs the code it is given"),
    ("sed 's/a/b/e' f", "sed `s///e` runs a command"),
    ("sed '1e id' f", "sed `e` runs a command"),
    ("sed -n '/x/w out' f", "sed `w` writes a file"),
    ("sed -l 5 'e id'", "sed `e` runs a command"),
    ("sed 'a\\\nhello\ne id' f", "sed `e` runs a command"),  # `a\`'s text ends with its line
    ("sed -f script.sed f", "sed -f runs a script file"),
    ("tar --to-command=sh -xf a.tar", "tar --to-command runs the program it is given"),
    ("tar --use-compress-program=sh -xf a.tar", "tar --use-compress-program runs"),
    ("tar -I zstd -xf a.tar", "tar -I runs the program it is given"),
    ("tar xIf zstd a.tar", "tar -xIf runs the program it is given"),
    ("tar --checkpoint-action=exec=sh -cf a.tar .", "tar --checkpoint-action runs"),
    ("rsync -e 'ssh -p 2' src dst", "rsync -e runs the program it is given as its remote shell"),
    ("rsync -avze ssh src dst", "rsync -avze runs the program it is given"),
    ("ssh -o ProxyCommand='sh -c x' host", "ssh -o sets an option that runs programs"),
    ("ssh -vo LocalCommand=x host", "ssh -o sets an option that runs programs"),
    ("ssh -F ./config host", "ssh -F reads a configuration that can run programs"),
    ("less notes.txt", "`less` has shell escapes"),
    ("more notes.txt", "`more` has shell escapes"),
    ("man ls", "`man` has shell escapes"),
    ("vim -c '!sh' f", "vim -c runs the code it is given"),
    ("vi +'!sh' f", "vi +command runs the code it is given"),
    ("npm exec cowsay", "npm exec runs the command it is given"),
    ("uv run ./x", "uv run runs the command it is given"),
    ("apt-get -o APT::Update::Pre-Invoke::=x update", "apt-get -o sets configuration that can run programs"),
    ("cargo --config 'target.x.runner=\"sh\"' run", "cargo --config sets configuration"),
    ("go test -exec=sh ./...", "go -exec runs the program it is given"),
    ("/usr/bin/git -c core.fsmonitor=x status", "git -c sets configuration"),
]

HARMLESS = [
    # (command, its head)
    ("git status", ("git", "status")),
    ("git status --short", ("git", "status")),
    ("git log -3", ("git", "log")),
    ("git diff --stat", ("git", "diff")),
    ("git commit -c HEAD", ("git", "commit")),  # reuses HEAD's message: no configuration
    ("git fetch -u origin", ("git", "fetch")),  # --update-head-ok, not --upload-pack
    ("git grep -e exec", ("git", "grep")),
    ("git", ("git",)),
    ("git --no-pager log", None),  # no code, but the second word is no subcommand
    ("/usr/bin/git status", ("/usr/bin/git", "status")),
    ("ls -la", ("ls",)),
    ("ls -- -exec", ("ls",)),
    ("cat ./-exec", ("cat",)),  # a file named `-exec`, for a program that has no such option
    ("echo -exec -c", ("echo",)),
    ("grep -e exec notes.txt", ("grep",)),
    ("grep -r system( src", ("grep",)),
    ("find . -name x", ("find",)),
    ("find ./-exec -name x", ("find",)),  # a path, not the action
    ("find . -type f -newer a -print", ("find",)),
    ("awk '{print $1}' f", ("awk",)),
    ("awk -F: '{print $1}' /etc/passwd", ("awk",)),
    ("sed -n 's/exec/x/p' f", ("sed",)),
    ("sed 's/[/]/x/' f", ("sed",)),
    ("sed -i 's/a/b/g' f", ("sed",)),
    ("sed ':a;N;$!ba;s/\\n/ /g' f", ("sed",)),
    ("tar -xzf a.tar.gz", ("tar",)),
    ("rsync -avz src dst", ("rsync",)),
    ("ssh host uptime", ("ssh",)),
    ("python3 manage.py test", ("python3", "manage.py")),
    ("python -m pytest", None),  # an option first: no script to name
    ("bash build.sh", ("bash", "build.sh")),
    ("perl script.pl", ("perl", "script.pl")),
    ("vim notes.txt", ("vim", "notes.txt")),
    ("docker ps -a", ("docker", "ps")),
    ("kubectl get pods", ("kubectl", "get")),
    ("npm install", ("npm", "install")),
    ("cargo build --release", ("cargo", "build")),
    ("go build ./...", ("go", "build")),
    ("apt install jq", ("apt", "install")),
    ("make test", ("make",)),
]


@pytest.mark.parametrize(("command", "why"), RUNS)
def test_what_can_run_other_code_says_why_and_has_no_head(command: str, why: str) -> None:
    words = shlex.split(command)
    said = runs_code(words)
    assert said is not None and said.startswith(why), said
    assert head(words) is None


@pytest.mark.parametrize(("command", "expected"), HARMLESS)
def test_a_harmless_look_alike_keeps_its_head(command: str, expected: tuple[str, ...] | None) -> None:
    words = shlex.split(command)
    assert runs_code(words) is None
    assert head(words) == expected


ANYWHERE = [
    *(
        ("find", option)
        for option in (
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-delete",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
        )
    ),
    ("tar", "--to-command=sh"),
    ("tar", "--use-compress-program=sh"),
    ("tar", "--checkpoint-action=exec=sh"),
    ("tar", "-I"),
    ("rsync", "-e"),
    ("rsync", "--rsh=sh"),
    ("ssh", "-oProxyCommand=sh"),
    ("python3", "-c"),
    ("perl", "-e"),
    ("ruby", "-e"),
    ("node", "--eval"),
    ("bash", "-c"),
    ("sh", "-c"),
    ("vim", "-c"),
    ("apt-get", "-o"),
    ("cargo", "--config"),
    ("go", "-toolexec=sh"),
    *(
        (program, "x")
        for program in ("env", "xargs", "nice", "nohup", "timeout", "sudo", "eval", "less", "man")
    ),
]
"""A program and a word that, anywhere after it, lets the command run other code."""

WORDS = st.one_of(
    st.sampled_from(
        ["status", "log", "-3", "--stat", ".", "x", "-name", "-la", "a.txt", "--", "-n", "1p", "{print}"]
    ),
    st.text(alphabet="abcx-./=", min_size=1, max_size=6),
)
GIT_GLOBAL = st.sampled_from(
    ["--no-pager", "-P", "-p", "--bare", "--no-replace-objects", "--literal-pathspecs"]
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ANYWHERE), st.lists(WORDS, max_size=5), st.data())
def test_a_flagged_option_anywhere_after_its_program_takes_the_head_away(
    flagged: tuple[str, str], others: list[str], data: st.DataObject
) -> None:
    program, option = flagged
    at = data.draw(st.integers(0, len(others)))
    words = [program, *others[:at], option, *others[at:]]
    assert runs_code(words) is not None, words
    assert head(words) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(GIT_GLOBAL, max_size=3),
    st.sampled_from(["-c", "--config-env=core.pager=P", "--exec-path=/tmp", "--git-dir=/tmp/x"]),
    st.lists(GIT_GLOBAL, max_size=3),
    st.sampled_from(["status", "log", "diff", "show"]),
    st.lists(WORDS, max_size=3),
)
def test_gits_code_options_anywhere_before_its_subcommand_take_the_head_away(
    before: list[str], option: str, after: list[str], command: str, rest: list[str]
) -> None:
    words = [
        "git",
        *before,
        option,
        *(["core.fsmonitor=x"] if option == "-c" else []),
        *after,
        command,
        *rest,
    ]
    assert runs_code(words) is not None, words
    assert head(words) is None


PROGRAMS = ["git", "ls", "find", "python3", "docker", "awk", "sed", "tar", "ssh", "vim", "X=1", "env"]


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.sampled_from(PROGRAMS), WORDS),
    st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=5),
)
def test_a_head_is_the_commands_first_words_and_only_of_one_that_runs_no_other_code(
    program: str, rest: list[str]
) -> None:
    """Any words at all (scripts left open, odd clusters): an answer, never an error."""
    words = [program, *rest]
    said = runs_code(words)
    assert said is None or said.strip()
    found = head(words)
    if found is not None:
        assert tuple(words[: len(found)]) == found and 1 <= len(found) <= 2
        assert runs_code(words) is None
