"""The ports tests hand to servers that bind later lie below the kernel's ephemeral range, where no
outgoing connection can take one first ('address already in use' in `synapse up`, once)."""

from __future__ import annotations

import socket

import pytest

from .support import EPHEMERAL_PORTS, free_ports


def test_free_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    try:
        low = int(EPHEMERAL_PORTS.read_text().split()[0])
    except OSError:
        pytest.skip(f"{EPHEMERAL_PORTS} cannot be read here: ports come from bind(0)")
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(port < low for port in ports), (ports, low)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
