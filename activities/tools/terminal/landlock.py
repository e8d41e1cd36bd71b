"""Landlock inside every sandbox: files are opened for writing only where the profile writes.

Read-only mounts stop writes to files, not writes into FIFOs or character devices (the kernel's
read-only check skips them): a host process reading a named pipe in a trusted folder would get what
a free `find -fprintf pipe` wrote. Landlock, once a process restricts itself, refuses every open for
writing (and every truncation, from ABI 3) outside the folders it was given: `/dev` (the sandbox's
own: null, tty, its terminal) and, per profile, the workspace and the sandbox's own `/tmp` and
`/var/tmp`. The restriction comes after bwrap's mounts (a landlocked process cannot mount) and before
the command: `RESTRICT` is a Perl program (perl-base is on every Debian and Ubuntu system and starts
in a few milliseconds, where Python takes tens) that reads the folders from the environment,
restricts itself and executes the command. It loads no module and runs as the sandbox's user.
"""

from __future__ import annotations

import ctypes
import shutil
from collections.abc import Iterable
from pathlib import Path

CREATE_RULESET = 444
"""landlock_create_ruleset (landlock_add_rule 445, landlock_restrict_self 446): the same numbers on
every architecture."""
CREATE_RULESET_VERSION = 1
WRITE_FILE, TRUNCATE = 1 << 1, 1 << 14
"""LANDLOCK_ACCESS_FS_WRITE_FILE (ABI 1), LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3)."""
VARIABLE = "SYNAPSE_LANDLOCK"
"""What `RESTRICT` reads (and removes before the command sees it): the handled rights, then each
folder's path in hex, space-separated (an environment variable cannot hold a NUL, a path can hold
anything else)."""
RESTRICT = " ".join(
    (
        "my ($rights, @folders) = split / /, delete $ENV{SYNAPSE_LANDLOCK};",
        'my $set = syscall(444, pack("Q", $rights), 8, 0);',
        'die "synapse: landlock_create_ruleset: $!\\n" if $set < 0;',
        'for my $folder (map { pack "H*", $_ } @folders) {',
        "sysopen(my $at, $folder, 010000000 | 02000000) or next;",
        'syscall(445, $set, 1, pack("Ql", $rights, fileno $at), 0) == 0',
        'or die "synapse: landlock_add_rule $folder: $!\\n"; }',
        'syscall(446, $set, 0) == 0 or die "synapse: landlock_restrict_self: $!\\n";',
        'exec { $ARGV[0] } @ARGV or die "synapse: $ARGV[0]: $!\\n";',
    )
)
"""Restrict this process to writing beneath the folders in `SYNAPSE_LANDLOCK`, then run the command
(its arguments after `--`). Opened with O_PATH|O_CLOEXEC; a folder that is not there is skipped."""


def abi() -> int:
    """The Landlock ABI this kernel offers (0: none, or turned off at boot)."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def rights(version: int) -> int:
    """What the sandbox's Landlock ruleset handles: writing files, and truncating them from ABI 3."""
    return WRITE_FILE | (TRUNCATE if version >= 3 else 0)


def variable(version: int, folders: Iterable[Path]) -> str:
    """The value of `VARIABLE` for a sandbox writing beneath `folders` alone."""
    return " ".join([str(rights(version)), *(str(folder).encode().hex() for folder in folders)])


def find_perl() -> str | None:
    """The Perl that runs `RESTRICT` (the system's, never a session's PATH)."""
    return shutil.which("perl", path="/usr/bin:/bin")
