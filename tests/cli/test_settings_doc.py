"""`synapse settings`: the reference made from the settings models (docs/settings.md is it, to the
letter), and the values in force, secrets not shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.chat.settings import ChatSettings
from cli.main import main
from cli.settings_doc import REGENERATE, markdown, sections
from core.settings import Settings

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def test_the_checked_in_reference_is_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "--markdown"]) == 0
    printed = capsys.readouterr().out
    assert printed == markdown()
    assert REFERENCE.read_text() == printed, f"docs/settings.md is out of date: run `{REGENERATE}`"


def test_every_setting_is_in_the_reference_with_its_variables() -> None:
    text = markdown()
    documented = [setting for _, _, found in sections() for setting in found]
    plain = [
        name for name, field in Settings.model_fields.items() if not hasattr(field.annotation, "model_fields")
    ]
    grouped = [
        (name, inner)
        for name, field in Settings.model_fields.items()
        for inner in getattr(field.annotation, "model_fields", {})
    ]
    assert [setting.path for setting in documented] == [(name,) for name in plain] + grouped
    for setting in documented:
        assert all(f"`{variable}`" in text for variable in setting.variables), setting.path
    assert [s.variables for s in documented if s.path == ("lark", "app_id")] == [
        ("LARK_APP_ID", "SYNAPSE_LARK_APP_ID")
    ]
    assert [s.variables for s in documented if s.path == ("data_dir",)] == [("SYNAPSE_DATA_DIR",)]
    assert all(f"| `{key}` |" in text for key in ChatSettings.model_fields)


def test_a_row_says_type_bounds_default_and_meaning() -> None:
    rows = {
        line.split(" | ")[0].strip("| `"): line for line in markdown().splitlines() if line.startswith("| `")
    }
    assert rows["SYNAPSE_SQL_READ_TIMEOUT_SECONDS"].startswith(
        "| `SYNAPSE_SQL_READ_TIMEOUT_SECONDS` | number, > 0, ≤ 25 | `10.0` | How long a read"
    )
    assert "| `pty` \\| `ttyd` | `pty` |" in rows["SYNAPSE_TERMINAL_BACKEND"]
    assert "| `1048576` (1 MiB) |" in rows["SYNAPSE_MAX_REQUEST_BYTES"]
    assert (
        "| `workspace-write` \\| `read-only` \\| `full` | `workspace-write` |"
        in rows["SYNAPSE_TERMINAL_SANDBOX"]
    )
    assert rows["SYNAPSE_DATA_DIR"] == "| `SYNAPSE_DATA_DIR` | path | `.synapse` | Where state lives. |"


def test_the_values_in_force_never_show_a_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    (tmp_path / ".env").write_text("SYNAPSE_API_PORT=9001\n")
    for variable, value in {
        "SYNAPSE_API_KEYS": "clear-key-1234:alice:admin",
        "LARK_APP_SECRET": "lark-secret-5678",
        "SYNAPSE_TTYD_CREDENTIAL": "user:pass-9012",
        "SYNAPSE_SQL_URL": "postgresql://agent:pw-3456@db.internal/shop",
        "SYNAPSE_TERMINAL_SANDBOX": "read-only",
    }.items():
        monkeypatch.setenv(variable, value)

    assert main(["settings"]) == 0

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "SYNAPSE_API_PORT=9001" in lines, ".env is read"
    assert "SYNAPSE_API_KEYS=(set; not shown)" in lines
    assert "LARK_APP_SECRET=(set; not shown)" in lines
    assert "SYNAPSE_TTYD_CREDENTIAL=(set; not shown)" in lines
    assert "SYNAPSE_SQL_URL=postgresql://agent:****@db.internal/shop" in lines
    assert "SYNAPSE_TERMINAL_SANDBOX=read-only" in lines
    assert "SYNAPSE_WORKFLOW_SANDBOX=true" in lines
    assert "LARK_APP_ID=" in lines
    for secret in ("clear-key-1234", "lark-secret-5678", "pass-9012", "pw-3456"):
        assert secret not in out


def test_a_bad_value_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNAPSE_API_PORT", "eighty")
    assert main(["settings"]) == 2
    assert "SYNAPSE_API_PORT='eighty'" in capsys.readouterr().err
