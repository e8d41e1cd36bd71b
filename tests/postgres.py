"""A real, throwaway PostgreSQL server for the tests: Debian's `postgresql`, started on loopback.

One server per test run, shared by its xdist workers: the first test that needs it starts it
(`shared_server`, under a file lock in the run's base temp directory), every test gets a fresh
database of its own (`PostgresServer.new_database`), and the run's end stops it (`stop_shared`,
from `pytest_sessionfinish` in the controlling process). Its files live in a temporary directory
that is removed then; fsync is off, since nothing needs to survive the run. PostgreSQL refuses to
run as root: as root, its programs run as the `postgres` account the Debian package creates.

Without the package the tests that need it are skipped, saying so (`UNAVAILABLE`); CI installs it.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import psycopg

from .support import free_port

USER = "synapse"
START_SECONDS = 60
STATE = "server.json"


def _binaries() -> Path | None:
    """The directory of `initdb`, `pg_ctl` and `postgres`: PATH's, else the newest Debian one."""
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        return Path(on_path).resolve().parent
    versions = glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
    newest = max(versions, key=lambda path: int(Path(path).parts[-3]), default=None)
    return Path(newest).parent if newest else None


def _account() -> str | None:
    """The account to run PostgreSQL as: ours, or `postgres` when we are root."""
    return "postgres" if os.getuid() == 0 else None


def _why_unavailable(binaries: Path | None) -> str | None:
    if binaries is None:
        return "PostgreSQL is not installed (Debian: apt-get install postgresql; CI's .ci/run does)"
    if os.getuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "PostgreSQL refuses to run as root, and there is no `postgres` account to run it as"
    return None


BINARIES = _binaries()
UNAVAILABLE = _why_unavailable(BINARIES)
"""Why no PostgreSQL can be started here (None: one can)."""


@dataclass(frozen=True)
class PostgresServer:
    """A running server: `127.0.0.1:port`, user `synapse`, no password (trust, loopback only)."""

    port: int
    directory: str
    """Its files (data and log), removed when it stops."""

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of one of its databases (psycopg 3)."""
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """Create an empty database and return its SQLAlchemy URL."""
        name = f"test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=USER, dbname="postgres", autocommit=True
        ) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _run(*args: str) -> None:
    assert BINARIES is not None
    done = subprocess.run(
        [str(BINARIES / args[0]), *args[1:]], user=_account(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stdout}{done.stderr}")


def _start() -> PostgresServer:
    """initdb into a new temporary directory and start the server on a free loopback port."""
    if UNAVAILABLE is not None:
        raise RuntimeError(UNAVAILABLE)
    root = Path(tempfile.mkdtemp(prefix="synapse-pg-"))
    if (account := _account()) is not None:
        shutil.chown(root, user=account)
    data, port = root / "data", free_port()
    try:
        _run("initdb", "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
        options = f"-h 127.0.0.1 -p {port} -k {root} -F -c max_connections=200"
        _run(
            "pg_ctl",
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-o",
            options,
            "-w",
            "-t",
            str(START_SECONDS),
            "start",
        )
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return PostgresServer(port, str(root))


def shared_server(run_dir: Path) -> PostgresServer:
    """The server of the test run whose shared directory is `run_dir`, started by the first caller."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = run_dir / STATE
        if state.exists():
            return PostgresServer(**json.loads(state.read_text()))
        server = _start()
        state.write_text(json.dumps(asdict(server)))
        return server


def stop_shared(run_dir: Path) -> None:
    """Stop the run's server, if one was started, and remove its files."""
    state = run_dir / STATE
    if not state.exists():
        return
    server = PostgresServer(**json.loads(state.read_text()))
    state.unlink()
    try:
        _run("pg_ctl", "-D", str(Path(server.directory) / "data"), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(server.directory, ignore_errors=True)
