"""`synapse up` refuses, before starting anything, ports that are taken or repeated."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from cli.ports import PortError, PortUse, check_ports, is_free

from ..support import free_ports
from .ports_helper import listening_port

ROLES = {
    "--api-port": ("API", "SYNAPSE_API_PORT"),
    "--temporal-port": ("Temporal gRPC", "SYNAPSE_TEMPORAL_PORT"),
    "--ui-port": ("Temporal Web UI", "SYNAPSE_UI_PORT"),
}


@pytest.mark.parametrize("flag", list(ROLES))
def test_port_in_use_is_one_clear_line_and_exit_2(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "state"
    others = dict(zip([f for f in ROLES if f != flag], free_ports(2), strict=True))
    with listening_port() as taken:
        argv = ["up", flag, str(taken), "--data-dir", str(data_dir)]
        for other_flag, port in others.items():
            argv += [other_flag, str(port)]

        code = main(argv)

    role, env = ROLES[flag]
    out, err = capsys.readouterr()
    assert code == 2
    assert err == f"error: port {taken} is already in use ({role}); choose another with {flag} or {env}\n"
    assert out == ""
    assert not data_dir.exists(), "nothing may start (or be created) when a port is taken"


def test_every_busy_port_is_named_in_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with listening_port() as api, listening_port() as temporal, listening_port() as ui:
        ports = ["--api-port", str(api), "--temporal-port", str(temporal), "--ui-port", str(ui)]
        code = main(["up", *ports, "--data-dir", str(tmp_path / "state")])

    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: port {api} is already in use (API); choose another with --api-port or SYNAPSE_API_PORT",
        f"error: port {temporal} is already in use (Temporal gRPC); choose another with --temporal-port "
        "or SYNAPSE_TEMPORAL_PORT",
        f"error: port {ui} is already in use (Temporal Web UI); choose another with --ui-port or SYNAPSE_UI_PORT",
    ]


def test_env_port_in_use_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    temporal, ui = free_ports(2)
    with listening_port() as taken:
        monkeypatch.setenv("SYNAPSE_API_PORT", str(taken))
        code = main(
            ["up", "--temporal-port", str(temporal), "--ui-port", str(ui), "--data-dir", str(tmp_path)]
        )

    assert code == 2
    assert f"error: port {taken} is already in use (API)" in capsys.readouterr().err


def test_same_port_twice_is_refused() -> None:
    (port,) = free_ports(1)
    uses = [
        PortUse(port, "API", "--api-port", "SYNAPSE_API_PORT"),
        PortUse(port, "Temporal gRPC", "--temporal-port", "SYNAPSE_TEMPORAL_PORT"),
    ]

    with pytest.raises(PortError) as raised:
        check_ports(uses)

    assert str(raised.value) == (
        f"error: port {port} is given to both the API and the Temporal gRPC; "
        "choose another with --temporal-port or SYNAPSE_TEMPORAL_PORT"
    )


def test_free_and_taken_ports() -> None:
    (port,) = free_ports(1)
    assert is_free("127.0.0.1", port)
    with listening_port() as taken:
        assert not is_free("127.0.0.1", taken)
