"""Layered settings: defaults, the user's file, the project's, the environment, flags; errors that
name the file and the key; where each value came from; trusting a folder; a reset with a backup."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.chat.settings import SettingsError, load
from cli.chat.settings_file import SettingsFileError, add_trusted, reset

NO_FLAGS: dict[str, str | None] = {"api_url": None, "api_key": None, "agent": None, "profile": None}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".synapse").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".synapse").mkdir(parents=True)
    return folder


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_each_layer_wins_over_the_one_before(home: Path, project: Path) -> None:
    write(home / ".synapse/settings.toml", 'vi_mode = true\nprofile = "restricted"\nagent = "Agent:mine"\n')
    write(project / ".synapse/settings.toml", 'profile = "enterprise"\nagent = "Agent:theirs"\n')
    env = {"SYNAPSE_CHAT_AGENT": "Agent:env", "SYNAPSE_API_URL": "http://api:1"}
    effective = load(project, {**NO_FLAGS, "profile": "default"}, env)

    settings = effective.settings
    assert (settings.vi_mode, settings.profile, settings.agent, settings.api_url) == (
        True,
        "default",
        "Agent:env",
        "http://api:1",
    )
    sources = {key: source for key, _, source in effective.rows()}
    assert sources["vi_mode"] == "~/.synapse/settings.toml"
    assert sources["profile"] == "--profile"
    assert sources["agent"] == "env SYNAPSE_CHAT_AGENT"
    assert sources["api_url"] == "env SYNAPSE_API_URL"
    assert sources["bell"] == "default"


def test_a_chat_variable_wins_over_the_shared_one_and_lists_are_comma_separated(
    home: Path, project: Path
) -> None:
    env = {
        "SYNAPSE_API_URL": "http://a:1",
        "SYNAPSE_CHAT_API_URL": "http://b:2",
        "SYNAPSE_CHAT_TRUSTED_FOLDERS": "/x, /y",
    }
    settings = load(project, NO_FLAGS, env).settings
    assert settings.api_url == "http://b:2"
    assert settings.trusted_folders == ["/x", "/y"]


def test_errors_name_the_file_and_the_key(home: Path, project: Path) -> None:
    write(home / ".synapse/settings.toml", 'vi_mode = "maybe"\nbel = false\n')
    write(project / ".synapse/settings.toml", "inline_limit_bytes = -1\n")
    with pytest.raises(SettingsError) as raised:
        load(project, NO_FLAGS, {"SYNAPSE_CHAT_AGENT": "demo"})
    problems = raised.value.problems
    assert problems[0].startswith("~/.synapse/settings.toml: vi_mode: Input should be a valid boolean")
    assert problems[1] == "~/.synapse/settings.toml: bel: no such setting; did you mean bell?"
    assert problems[2].startswith(
        f"{project}/.synapse/settings.toml: inline_limit_bytes: Input should be greater than 0"
    )
    assert problems[3].startswith("env SYNAPSE_CHAT_AGENT: agent: String should match pattern")


def test_a_file_that_is_not_toml_is_named(home: Path, project: Path) -> None:
    write(home / ".synapse/settings.toml", "vi_mode = \n")
    with pytest.raises(SettingsError, match=r"^~/.synapse/settings.toml: not valid TOML: "):
        load(project, NO_FLAGS, {})


def test_a_project_cannot_trust_itself_or_send_your_key_elsewhere(home: Path, project: Path) -> None:
    write(project / ".synapse/settings.toml", f'trusted_folders = ["{project}"]\napi_url = "http://evil"\n')
    with pytest.raises(SettingsError) as raised:
        load(project, NO_FLAGS, {})
    assert raised.value.problems == [
        f"{project}/.synapse/settings.toml: api_url: only your own ~/.synapse/settings.toml may set it",
        f"{project}/.synapse/settings.toml: trusted_folders: only your own ~/.synapse/settings.toml may set it",
    ]


def test_secrets_are_masked(home: Path, project: Path) -> None:
    rows = {
        key: value for key, value, _ in load(project, {**NO_FLAGS, "api_key": "sk-0123456789"}, {}).rows()
    }
    assert rows["api_key"] == "****6789"


def test_trusting_a_folder_keeps_the_rest_of_the_file(home: Path, tmp_path: Path) -> None:
    path = write(
        home / ".synapse/settings.toml", '# my settings\nvi_mode = true\n\ntrusted_folders = [\n  "/a",\n]\n'
    )
    assert add_trusted(path, tmp_path / "b") == ["/a", str(tmp_path / "b")]
    assert add_trusted(path, tmp_path / "b") == ["/a", str(tmp_path / "b")]  # once
    text = path.read_text()
    assert text.startswith("# my settings\nvi_mode = true\n\n")
    fresh = home / ".synapse/new.toml"
    assert add_trusted(fresh, Path("/c")) == ["/c"] and fresh.read_text() == 'trusted_folders = ["/c"]\n'


def test_an_unusual_file_is_left_alone(home: Path) -> None:
    path = write(home / ".synapse/settings.toml", 'trusted_folders = ["/a]"]  # tricky\n')
    before = path.read_text()
    with pytest.raises(SettingsFileError, match="add '/b' by hand"):
        add_trusted(path, Path("/b"))
    assert path.read_text() == before


def test_reset_keeps_a_backup(home: Path) -> None:
    path = write(home / ".synapse/settings.toml", "vi_mode = true\n")
    backup = reset(path)
    assert backup is not None and backup.read_text() == "vi_mode = true\n" and not path.exists()
    assert reset(path) is None


def test_in_the_home_folder_the_users_file_is_not_a_projects(home: Path) -> None:
    write(home / ".synapse/settings.toml", f'trusted_folders = ["{home}"]\nvi_mode = true\n')
    effective = load(home, NO_FLAGS, {})
    assert effective.settings.trusted_folders == [str(home)]
    assert {key: source for key, _, source in effective.rows()}["vi_mode"] == "~/.synapse/settings.toml"
