"""`settings.tools`: the builtin tools (the `sql` tool's database, the terminal and its sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from contracts import SandboxProfile

from .group import Group, env


class ToolSettings(Group):
    """The builtin tools."""

    sql_url: str | None = Field(
        default=None,
        validation_alias=env("sql_url", "SYNAPSE_SQL_URL"),
        description="SQLAlchemy URL of the `sql` tool's database (SQLite or PostgreSQL: "
        "`postgresql://user:password@host/db`); only its `synapse_tool_runs` table is Synapse's. "
        "`sqlite:///<data_dir>/demo.db` (seeded with the demo `orders`) when unset.",
    )
    sql_max_rows: int = Field(
        default=10_000,
        gt=0,
        validation_alias=env("sql_max_rows", "SYNAPSE_SQL_MAX_ROWS"),
        description="Rows a SQL result keeps (the rest are counted). A result larger than "
        "SYNAPSE_INLINE_BYTES is stored as an artifact and previewed.",
    )
    sql_read_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=25,
        validation_alias=env("sql_read_timeout_seconds", "SYNAPSE_SQL_READ_TIMEOUT_SECONDS"),
        description="How long a read that runs without approval may take (rows fetched included); "
        "past it the read is stopped and the agent told so. At most 25: a SQL call is retried "
        "after 30 s.",
    )
    terminal_backend: Literal["pty", "ttyd"] = Field(
        default="pty",
        validation_alias=env("terminal_backend", "SYNAPSE_TERMINAL_BACKEND"),
        description="`pty`: bash on a PTY of the worker; `ttyd`: the terminal at SYNAPSE_TTYD_URL.",
    )
    ttyd_url: str = Field(
        default="ws://127.0.0.1:7681/ws",
        validation_alias=env("ttyd_url", "SYNAPSE_TTYD_URL"),
        description="WebSocket URL of ttyd (backend `ttyd`).",
    )
    ttyd_credential: str | None = Field(
        default=None,
        validation_alias=env("ttyd_credential", "SYNAPSE_TTYD_CREDENTIAL"),
        description="`user:pass` of ttyd's `-c` (basic auth and token).",
    )
    terminal_cwd: Path | None = Field(
        default=None,
        validation_alias=env("terminal_cwd", "SYNAPSE_TERMINAL_CWD"),
        description="Where a session's terminal starts (default: the worker's working directory; "
        "`synapse up` gives its worker `<data dir>/workspace`, created on start, unless this or "
        "SYNAPSE_TERMINAL_WORKSPACE is set).",
    )
    terminal_allow: str = Field(
        default="ls,pwd,cat,head,tail,wc,echo,date,whoami,uname,grep,find,stat,du,df,git",
        validation_alias=env("terminal_allow", "SYNAPSE_TERMINAL_ALLOW"),
        description="Read-only programs that run without approval inside the trusted folders "
        "(comma-separated; a command with pipes, redirects or `;` always asks; `git` only with a "
        "read-only subcommand: status, log, diff, show, branch, rev-parse).",
    )
    terminal_trusted: str = Field(
        default="",
        validation_alias=env("terminal_trusted", "SYNAPSE_TERMINAL_TRUSTED"),
        description="Folders (comma-separated) an allowlisted program may read without approval, in "
        "a read-only sandbox that shows nothing else (default: the terminal's cwd).",
    )
    terminal_sandbox: SandboxProfile = Field(
        default=SandboxProfile.WORKSPACE_WRITE,
        validation_alias=env("terminal_sandbox", "SYNAPSE_TERMINAL_SANDBOX"),
        description="Sandbox of approved commands on PTY terminals unless the session, its agent or "
        "the approver chooses another: `workspace-write` (writes only under SYNAPSE_TERMINAL_WORKSPACE "
        "and a /tmp of its own; the network with SYNAPSE_TERMINAL_NETWORK=host), `read-only`, or `full` "
        "(no sandbox).",
    )
    terminal_network: Literal["none", "host"] = Field(
        default="none",
        validation_alias=env("terminal_network", "SYNAPSE_TERMINAL_NETWORK"),
        description="`host`: `workspace-write` commands share the host's network, and so reach every "
        "service listening on it (Synapse's API and Temporal among them: set it only where those ask "
        "for credentials a sandbox does not have); `none`: no sandbox has a network.",
    )
    terminal_workspace: Path | None = Field(
        default=None,
        validation_alias=env("terminal_workspace", "SYNAPSE_TERMINAL_WORKSPACE"),
        description="The folder `workspace-write` commands may write to (default: the terminal's cwd).",
    )
    terminal_env: str = Field(
        default="",
        validation_alias=env("terminal_env", "SYNAPSE_TERMINAL_ENV"),
        description="Names of the worker's environment variables a terminal is given (comma-separated), "
        "besides PATH, HOME, USER, LANG, LC_*, TZ and TMPDIR: the worker's secrets stay out of it.",
    )
    terminal_bwrap: str = Field(
        default="bwrap",
        validation_alias=env("terminal_bwrap", "SYNAPSE_TERMINAL_BWRAP"),
        description="The bubblewrap program sandboxes are made with (Debian package `bubblewrap`); "
        "without it, every command needs approval and approved ones need the `full` profile.",
    )
    terminal_sandbox_uid: int = Field(
        default=60001,
        gt=0,
        lt=2**32 - 1,
        validation_alias=env("terminal_sandbox_uid", "SYNAPSE_TERMINAL_SANDBOX_UID"),
        description="When the worker runs as root: the uid (and gid) its sandboxed commands run as, "
        "never root; pick one no account or file of the host uses. `workspace-write` writes the "
        "workspace through an ACL entry for it. A worker that is not root runs them as itself.",
    )
    terminal_timeout_seconds: float = Field(
        default=240.0,
        gt=0,
        validation_alias=env("terminal_timeout_seconds", "SYNAPSE_TERMINAL_TIMEOUT_SECONDS"),
        description="A command running longer gets Ctrl-C.",
    )
    terminal_idle_seconds: float = Field(
        default=120.0,
        gt=0,
        validation_alias=env("terminal_idle_seconds", "SYNAPSE_TERMINAL_IDLE_SECONDS"),
        description="A command silent this long (e.g. waiting for input) gets Ctrl-C.",
    )
    terminal_heartbeat_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("terminal_heartbeat_seconds", "SYNAPSE_TERMINAL_HEARTBEAT_SECONDS"),
        description="A running command heartbeats; silent this long, its worker is taken for gone.",
    )
    terminal_worker_wait_seconds: float = Field(
        default=20.0,
        gt=0,
        validation_alias=env("terminal_worker_wait_seconds", "SYNAPSE_TERMINAL_WORKER_WAIT_SECONDS"),
        description="How long a command waits for the worker holding its session's terminal; "
        "then that terminal is lost and the next command starts a fresh one.",
    )
