"""The `synapse` command line: help for every subcommand, usage errors, settings errors."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from cli.main import main

SUBCOMMANDS = [
    ["up"],
    ["pending"],
    ["worker"],
    ["api"],
    ["schema"],
    ["settings"],
    ["history"],
    ["history", "export"],
]


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])

    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: synapse {' '.join(argv)}")
    assert len(out.splitlines()) > 4


def test_up_help_names_flags_and_variables(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["up", "--help"])

    out = capsys.readouterr().out
    for flag, env in [
        ("--api-port", "SYNAPSE_API_PORT"),
        ("--temporal-port", "SYNAPSE_TEMPORAL_PORT"),
        ("--ui-port", "SYNAPSE_UI_PORT"),
        ("--data-dir", "SYNAPSE_DATA_DIR"),
    ]:
        assert flag in out and env in out


@pytest.mark.parametrize("argv", [["bogus"], [], ["history"], ["up", "--api-port", "eighty"]])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)

    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("usage: synapse")


def test_invalid_setting_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SYNAPSE_UI_PORT", "lots")

    assert main(["up"]) == 2

    err = capsys.readouterr().err
    assert err.startswith(
        "error: invalid setting (check SYNAPSE_* variables and flags): SYNAPSE_UI_PORT='lots'"
    )
    assert err.count("\n") == 1


def test_console_script_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "--help"], capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0
    assert "usage: synapse" in done.stdout


def test_an_invalid_secret_setting_is_named_but_never_echoed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SYNAPSE_CODEC_KEYS", "k1:c2hvcnQtc2VjcmV0")  # "short-secret": 12 bytes

    assert main(["worker"]) == 2

    err = capsys.readouterr().err
    assert "SYNAPSE_CODEC_KEYS (value not shown)" in err and "is 12 bytes" in err
    assert "c2hvcnQtc2VjcmV0" not in err


def test_version_names_the_installed_package(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])

    assert exited.value.code == 0
    assert capsys.readouterr().out == f"synapse {version('synapse')}\n"
