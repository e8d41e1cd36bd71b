"""A taken loopback port, for tests of what meets one (free ones: `tests.support.free_ports`)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def listening_port() -> Iterator[int]:
    """A loopback port another server is listening on, for as long as the block runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]
