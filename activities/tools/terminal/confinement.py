"""Who a sandboxed command runs as, and what the kernel refuses it besides bwrap's mounts.

- **Never root.** A worker running as root starts bwrap as root (its mounts need root to reach
  folders only root may enter), without a user namespace, keeping only CAP_SETUID and CAP_SETGID;
  the first program inside, util-linux `setpriv`, becomes `SYNAPSE_TERMINAL_SANDBOX_UID` (uid and
  gid, no supplementary groups, no capabilities left) before anything else runs. As root in a user
  namespace (bwrap's default) the command was the host's root: `--cap-drop ALL` does not stop a
  sysctl write, which the kernel checks against the uid. A worker that is not root runs bwrap
  unprivileged, in a user namespace (`--unshare-all`), and its commands as its own uid.
- **No Unix socket** (`seccomp`): loaded by bwrap just before the first program inside.
- **No write outside the profile's folders** (`landlock`): FIFOs and devices included; applied by
  Perl after `setpriv`, so it never runs as root.

What this kernel or system lacks is a gap, said in the worker's log at start (`gaps`), never a
silent weakening; only a missing `setpriv` under root stops the sandbox (a root command is what it
is there to prevent).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import landlock, seccomp

SECCOMP_FD = 10
"""The file descriptor bwrap reads the seccomp filter from (`--seccomp`)."""
ROOT_CAPABILITIES = ("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
"""What bwrap started by root leaves the first program inside: enough for `setpriv` to drop to the
sandbox's uid, after which the kernel clears them."""
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")
"""`--unshare-all` but the user namespace (and the network, chosen apart): as root, the sandbox's uid
must be a real one of the host."""


@dataclass(frozen=True)
class Confinement:
    """The uid, seccomp filter and Landlock of this worker's sandboxes."""

    uid: int
    gid: int
    setpriv: str | None = None
    """util-linux `setpriv`, when the worker is root and drops to `uid` inside every sandbox."""
    perl: str | None = None
    """The Perl that applies Landlock (None: no Landlock)."""
    landlock: int = 0
    """The kernel's Landlock ABI (0: none)."""
    seccomp: bytes | None = None
    """The seccomp filter (None: none can be loaded here)."""
    gaps: tuple[str, ...] = ()
    """What this worker's sandboxes cannot refuse, and why (said in the log at start)."""

    @classmethod
    def find(cls, sandbox_uid: int) -> tuple[Confinement | None, str]:
        """The confinement this system allows; None and why when a root worker has no `setpriv`."""
        root = os.geteuid() == 0
        setpriv = shutil.which("setpriv", path="/usr/bin:/bin") if root else None
        if root and setpriv is None:
            return None, (
                "the worker runs as root and util-linux `setpriv` was not found in /usr/bin or /bin: "
                "sandboxed commands would run as root"
            )
        gaps: list[str] = []
        program, why = seccomp.unix_socket_filter()
        if program is None:
            gaps.append(f"Unix sockets of the host can be connected to ({why})")
        version, perl = landlock.abi(), landlock.find_perl()
        if version == 0:
            gaps.append("FIFOs outside a profile's folders can be written (this kernel has no Landlock)")
        elif perl is None:
            gaps.append(
                "FIFOs outside a profile's folders can be written (no perl in /usr/bin to apply Landlock)"
            )
        return cls(
            uid=sandbox_uid if root else os.getuid(),
            gid=sandbox_uid if root else os.getgid(),
            setpriv=setpriv,
            perl=perl if version else None,
            landlock=version if perl else 0,
            seccomp=program,
            gaps=tuple(gaps),
        ), ""

    @property
    def programs(self) -> tuple[str, ...]:
        """The programs it runs inside every sandbox before the command (trusted like bwrap)."""
        return tuple(program for program in (self.setpriv, self.perl) if program is not None)

    def namespaces(self, share_net: bool) -> list[str]:
        """bwrap's namespaces and capabilities: see the module's docstring."""
        if self.setpriv is None:
            return ["--unshare-all", *(["--share-net"] if share_net else []), "--cap-drop", "ALL"]
        return [*NAMESPACES, *([] if share_net else ["--unshare-net"]), *ROOT_CAPABILITIES]

    def arguments(self, writable: Iterable[Path]) -> list[str]:
        """bwrap's seccomp filter (read from `SECCOMP_FD`) and Landlock's folders: `/dev` and `writable`."""
        filtered = ["--seccomp", str(SECCOMP_FD)] if self.seccomp is not None else []
        if not self.landlock:
            return filtered
        folders = [Path("/dev"), *writable]
        return [*filtered, "--setenv", landlock.VARIABLE, landlock.variable(self.landlock, folders)]

    def runner(self) -> list[str]:
        """What runs inside before the command (its words follow): `setpriv` then Landlock."""
        drop = (
            [
                self.setpriv,
                f"--reuid={self.uid}",
                f"--regid={self.gid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--",
            ]
            if self.setpriv is not None
            else []
        )
        restrict = (
            [self.perl, "-e", landlock.RESTRICT, "--"] if self.perl is not None and self.landlock else []
        )
        return [*drop, *restrict]
