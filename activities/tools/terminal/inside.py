"""What runs inside a sandbox before the command, and what the typed line holds it by.

bwrap and the fixed scripts below get everything through file descriptors the typed line opens
(`sandbox.Sandbox._line`): no word the agent wrote is typed. The scripts read what the shell gave
them from those descriptors, never by name again (`/dev/fd/N`): the sandbox's user may not open
the worker's pipe or file anew.
"""

from __future__ import annotations

from .confinement import SECCOMP_FD
from .pty_shell import COLUMNS, ROWS

BASH = "/bin/bash"
CAT = "/bin/cat"
RELAY = f"2>&1 | {CAT}; __synapse_status ${{PIPESTATUS[0]}}"
"""A sandboxed command holds no descriptor of the session's terminal: it reads nothing, and what it
prints reaches the terminal through a pipe and `cat`, outside (its status is the command's). With
the terminal, it could change its line discipline, swallow Ctrl-C and fake the shell's answer."""
OVERLAY_FD, WORDS_FD, ARGS_FD, STATUS_FD, ENV_FD, STATE_FD = 4, 5, 6, 7, 8, 9
"""File descriptors of the exports earlier sandboxed commands made (in), the command (its words, or
its text), bwrap's arguments, bwrap's JSON status, the shell's exports (in) and the carried state (out)."""
SIZE = f"stty cols {COLUMNS} rows {ROWS} 2>/dev/null\n"
"""A sandbox's own terminal is as wide as the session's (programs lay out their output by it)."""
CLOSE = f"exec {ARGS_FD}<&- {STATUS_FD}>&- {SECCOMP_FD}<&-"
"""What of bwrap's the command inside does not hold."""
RUN_WORDS = (
    f"{CLOSE}; mapfile -d '' -t __synapse_words <&{WORDS_FD}; "
    f'exec {WORDS_FD}<&-; exec -- "${{__synapse_words[@]}}"'
)
"""Inside a free sandbox: run the words, NUL-separated on fd 5, as one program and its arguments."""
RUN_COMMAND = (
    f"{CLOSE}; set -P\n"
    f"for __synapse_fd in {ENV_FD} {OVERLAY_FD}; do IFS= read -r -d '' -u $__synapse_fd __synapse_exports; "
    'eval "$__synapse_exports"; done; '
    f"unset __synapse_fd __synapse_exports; exec {ENV_FD}<&- {OVERLAY_FD}<&-\n"
    f"IFS= read -r -d '' __synapse_command <&{WORDS_FD}; exec {WORDS_FD}<&-\n"
    "__synapse_env() { local __synapse_n IFS=$' \\t\\n'; for __synapse_n in $(compgen -e); do "
    'printf \'%s=%s\\0\' "$__synapse_n" "${!__synapse_n}"; done; }\n'
    f"{{ __synapse_env; printf '\\0'; }} >&{STATE_FD}\n"
    f'trap \'__synapse_s=$?; {{ printf "%s\\0" "$(pwd -P)"; __synapse_env; }} >&{STATE_FD} 2>/dev/null; '
    "exit $__synapse_s' EXIT\n"
    'eval "$__synapse_command"\n'
)
"""Inside an approved sandbox: take the shell's exports and those of earlier sandboxed commands (read
from their descriptors: the sandbox's user may not open the worker's pipe or file again by name),
write them (before), run the command text from fd 5, and on exit write the folder (physical) and
the exports it leaves (after), NUL-separated (quietly: bash may warn there about a background job
the command left, `wait_for: No record of process`, which is not the command's output)."""
