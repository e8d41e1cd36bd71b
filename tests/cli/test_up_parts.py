"""The pieces `synapse up` is built from: dev server command line and child environment."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from cli.up import banner, child_env, public_host, temporal_command
from core.settings import ApiSettings, Settings, TemporalSettings, ToolSettings
from workflows.identity.search_attributes import dev_server_flags


def test_dev_server_command_keeps_state_and_registers_search_attributes(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "state", temporal=TemporalSettings(port=7300, ui_port=8300))

    argv = temporal_command(settings, "/venv/bin/temporal")

    assert argv[:3] == ["/venv/bin/temporal", "server", "start-dev"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert flags["--ip"] == "127.0.0.1"
    assert flags["--port"] == "7300"
    assert flags["--ui-port"] == "8300"
    assert flags["--db-filename"] == str(tmp_path / "state" / "temporal.db")
    assert flags["--namespace"] == "default"
    assert argv[-len(dev_server_flags()) :] == dev_server_flags()


def test_with_payload_encryption_the_web_ui_decodes_through_the_api(tmp_path: Path) -> None:
    keys = TemporalSettings(codec_keys=f"k1:{base64.b64encode(bytes(32)).decode()}")
    settings = Settings(data_dir=tmp_path, api=ApiSettings(host="0.0.0.0", port=9100), temporal=keys)

    argv = temporal_command(settings, "temporal")

    assert argv[argv.index("--ui-codec-endpoint") + 1] == "http://127.0.0.1:9100/codec"
    assert "--ui-codec-endpoint" not in temporal_command(Settings(data_dir=tmp_path), "temporal")


def test_children_reach_the_embedded_server_only(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        api=ApiSettings(port=9000),
        temporal=TemporalSettings(port=7300, ui_port=8300, task_queue="tq"),
    )
    base = {
        "PATH": "/bin",
        "TEMPORAL_ADDRESS": "cloud.example:7233",
        "TEMPORAL_API_KEY": "secret",
        "TEMPORAL_PROFILE": "prod",
        "SYNAPSE_API_KEYS": "k:alice:admin",
    }

    env = child_env(settings, base)

    assert env["TEMPORAL_ADDRESS"] == "127.0.0.1:7300"
    assert env["TEMPORAL_NAMESPACE"] == "default"
    assert "TEMPORAL_API_KEY" not in env and "TEMPORAL_PROFILE" not in env
    assert env["SYNAPSE_API_PORT"] == "9000"
    assert env["SYNAPSE_TEMPORAL_PORT"] == "7300"
    assert env["SYNAPSE_DATA_DIR"] == str(tmp_path.resolve())
    assert env["SYNAPSE_TASK_QUEUE"] == "tq"
    assert env["SYNAPSE_API_KEYS"] == "k:alice:admin"  # other settings pass through untouched
    assert env["PATH"] == "/bin"


def test_urls_use_a_reachable_host() -> None:
    assert public_host("0.0.0.0") == "127.0.0.1"
    assert public_host("127.0.0.1") == "127.0.0.1"
    assert public_host("10.1.2.3") == "10.1.2.3"


def test_the_readme_shows_the_banner_up_prints() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = re.search(r"`make up` prints:\n\n```\n(.*?)```", readme, re.DOTALL)
    assert block, "README.md shows what `make up` prints in a code block after '`make up` prints:'"

    shown = block.group(1).splitlines()

    assert shown == banner("http://127.0.0.1:8000", 8233)
    assert any(line.strip().startswith("API docs:") and line.endswith("/docs") for line in shown)
    assert any("Web UI" in line for line in shown)


def test_the_terminal_works_in_a_workspace_of_its_own_unless_one_is_set(tmp_path: Path) -> None:
    env = child_env(Settings(data_dir=tmp_path, _env_file=None), {})
    assert env["SYNAPSE_TERMINAL_CWD"] == str(tmp_path.resolve() / "workspace")

    chosen = Settings(data_dir=tmp_path, tools=ToolSettings(terminal_cwd=tmp_path / "shop"), _env_file=None)
    assert "SYNAPSE_TERMINAL_CWD" not in child_env(chosen, {}), (
        "the folder set reaches the worker as it was set"
    )
    walled = Settings(data_dir=tmp_path, tools=ToolSettings(terminal_workspace=tmp_path), _env_file=None)
    assert "SYNAPSE_TERMINAL_CWD" not in child_env(walled, {})
