"""A seccomp filter for every sandbox: no Unix socket, no io_uring, no foreign system-call table.

A Unix socket (a path, or an abstract name on a shared network) connects to whatever listens on the
host: the Docker or D-Bus socket, an agent's, a test's. Read-only mounts do not stop `connect()` (the
kernel's read-only check skips sockets), and Landlock cannot name them, so `socket(AF_UNIX, ...)` is
refused with EAFNOSUPPORT ("not offered here"; `socketpair`, which reaches nothing, still works).
io_uring could create the same socket without the system call, so it is refused (EPERM), and so are
x32 calls and any other architecture's (32-bit programs are killed: their `socketcall` would
multiplex `socket` past this filter). It is a classic BPF program, built here and given to bwrap
(`--seccomp FD`), which loads it just before the command starts.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass
from pathlib import Path

LOAD, JUMP_EQUAL, JUMP_AT_LEAST, RETURN = 0x20, 0x15, 0x35, 0x06
"""BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_JMP|BPF_JGE|BPF_K, BPF_RET|BPF_K."""
NUMBER, ARCH, FIRST_ARGUMENT = 0, 4, 16
"""Offsets in `struct seccomp_data` (the first argument's low 32 bits on little-endian machines)."""
ALLOW, KILL_PROCESS, ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
AF_UNIX = 1
X32_BIT = 0x40000000
IO_URING = (425, 426, 427)
"""io_uring_setup, io_uring_enter, io_uring_register: the same numbers on every architecture."""
ACTIONS = Path("/proc/sys/kernel/seccomp/actions_avail")


@dataclass(frozen=True)
class Machine:
    """What the filter needs to know of an architecture."""

    audit_arch: int
    socket: int
    x32: bool


MACHINES = {
    "x86_64": Machine(audit_arch=0xC000003E, socket=41, x32=True),
    "aarch64": Machine(audit_arch=0xC00000B7, socket=198, x32=False),
}


def _op(code: int, k: int, true: int = 0, false: int = 0) -> bytes:
    return struct.pack("=HBBI", code, true, false, k)


def program(machine: Machine) -> bytes:
    """The filter (`struct sock_filter[]`, native byte order) for `machine`."""
    refused = ERRNO | errno.EPERM
    x32 = [_op(JUMP_AT_LEAST, X32_BIT, 0, 1), _op(RETURN, KILL_PROCESS)] if machine.x32 else []
    return b"".join(
        [
            _op(LOAD, ARCH),
            _op(JUMP_EQUAL, machine.audit_arch, 1, 0),
            _op(RETURN, KILL_PROCESS),
            _op(LOAD, NUMBER),
            *x32,
            *(op for call in IO_URING for op in (_op(JUMP_EQUAL, call, 0, 1), _op(RETURN, refused))),
            _op(JUMP_EQUAL, machine.socket, 1, 0),
            _op(RETURN, ALLOW),
            _op(LOAD, FIRST_ARGUMENT),
            _op(JUMP_EQUAL, AF_UNIX, 0, 1),
            _op(RETURN, ERRNO | errno.EAFNOSUPPORT),
            _op(RETURN, ALLOW),
        ]
    )


def unix_socket_filter() -> tuple[bytes | None, str]:
    """The filter for this machine, or None and why this kernel or machine cannot have one."""
    machine = MACHINES.get(platform.machine())
    if machine is None:
        return None, f"no seccomp filter is written for {platform.machine()} (only {', '.join(MACHINES)})"
    try:
        actions = ACTIONS.read_text().split()
    except OSError as err:
        return None, f"this kernel has no seccomp filters ({ACTIONS}: {err.strerror})"
    if not {"errno", "kill_process"} <= set(actions):
        return None, f"this kernel's seccomp lacks errno or kill_process ({ACTIONS}: {' '.join(actions)})"
    return program(machine), ""
