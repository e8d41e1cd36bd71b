"""Checking, before anything starts, that the ports `synapse up` needs are free."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from core.settings import Settings


@dataclass(frozen=True)
class PortUse:
    """One port `synapse up` binds, and how a user chooses another.

    Attributes:
        port: The port number.
        role: What listens there, for messages ("API", "Temporal gRPC", "Temporal Web UI").
        flag: The command-line flag that sets it.
        env: The environment variable that sets it.
        host: The interface it is checked on.
    """

    port: int
    role: str
    flag: str
    env: str
    host: str = "127.0.0.1"


class PortError(Exception):
    """A port is taken or used twice; the message is one line for the user."""


def ports_of(settings: Settings) -> list[PortUse]:
    """The ports `synapse up` will listen on with these settings."""
    api_host = "127.0.0.1" if settings.api.host in ("", "localhost") else settings.api.host
    return [
        PortUse(settings.api.port, "API", "--api-port", "SYNAPSE_API_PORT", api_host),
        PortUse(settings.temporal.port, "Temporal gRPC", "--temporal-port", "SYNAPSE_TEMPORAL_PORT"),
        PortUse(settings.temporal.ui_port, "Temporal Web UI", "--ui-port", "SYNAPSE_UI_PORT"),
    ]


def is_free(host: str, port: int) -> bool:
    """Whether a server could listen on `host:port` now.

    `SO_REUSEADDR` is set as servers set it, so a port left in TIME_WAIT by a previous run
    counts as free while a listening socket does not.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def check_ports(uses: list[PortUse]) -> None:
    """Fail with one clear line per problem if a port is used twice or already taken.

    Every port is checked before failing, so one run names all the busy ones.

    Raises:
        PortError: Every problem found, one line each, naming the port and the flag/variable to change.
    """
    problems: list[str] = []
    seen: dict[int, PortUse] = {}
    for use in uses:
        if use.port in seen:
            other = seen[use.port]
            problems.append(
                f"error: port {use.port} is given to both the {other.role} and the {use.role}; "
                f"choose another with {use.flag} or {use.env}"
            )
            continue
        seen[use.port] = use
        if not 0 < use.port < 65536:
            problems.append(
                f"error: port {use.port} ({use.role}) is not a valid port (1-65535); "
                f"choose another with {use.flag} or {use.env}"
            )
        elif not is_free(use.host, use.port):
            problems.append(
                f"error: port {use.port} is already in use ({use.role}); "
                f"choose another with {use.flag} or {use.env}"
            )
    if problems:
        raise PortError("\n".join(problems))
