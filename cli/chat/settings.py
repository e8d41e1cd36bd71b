"""The REPL's settings, layered: built-in defaults, `~/.synapse/settings.toml`, the project's
`.synapse/settings.toml`, the environment (`SYNAPSE_CHAT_*`, and `SYNAPSE_API_URL` /
`SYNAPSE_API_KEY`), then the command's flags; each later layer wins key by key. A project's file
may not set `USER_ONLY` keys (where the API is, the key, who you are, what folders you trust).

Every layer is validated on its own, so an error names the file (or variable, or flag) and the
key; `Effective.sources` says where each value came from (`/settings` shows it).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .places import shown, user_dir
from .settings_file import SettingsFileError, read_toml

DEFAULT = "default"
ENV_PREFIX = "SYNAPSE_CHAT_"
SHARED_ENV = {"SYNAPSE_API_URL": "api_url", "SYNAPSE_API_KEY": "api_key"}
"""Variables `synapse run` reads too (a `SYNAPSE_CHAT_*` one wins over them)."""
SECRET = frozenset({"api_key"})
USER_ONLY = ("api_url", "api_key", "principal", "history_file", "trusted_folders")
"""Keys a project's file may not set: a checkout must not trust itself, send your key elsewhere or
speak as someone else."""
FLAGS = {"api_url": "--api", "api_key": "--api-key", "agent": "--agent", "profile": "--profile"}
"""The keys `synapse chat` takes as flags."""


class ChatSettings(BaseModel):
    """What `synapse chat` can be told (each key is a line in a settings file)."""

    model_config = ConfigDict(extra="forbid")

    api_url: str = Field(default="http://127.0.0.1:8000", description="The Synapse API.")
    api_key: str | None = Field(default=None, description="Bearer key, when the API needs one.")
    agent: str = Field(
        default="Agent:demo", pattern=r"^(Agent|Group):.+$", description="The agent of new sessions."
    )
    profile: str = Field(
        default="default", description="Profile of new sessions (default, restricted, enterprise)."
    )
    principal: str | None = Field(default=None, description="Who you are to the API (default: $USER).")
    project: str | None = Field(
        default=None,
        min_length=1,
        description="The project new sessions work in (default: this folder's path; with a key "
        "scoped to projects, its only one).",
    )
    vi_mode: bool = Field(default=False, description="Edit the input line with vi keys.")
    bell: bool = Field(default=True, description="Ring the terminal bell when a request waits for you.")
    history_file: str = Field(default="~/.synapse/chat_history", description="Where typed lines are kept.")
    trusted_folders: list[str] = Field(
        default_factory=list, description="Folders whose files `@path` may attach (you are asked to add one)."
    )
    inline_limit_bytes: int = Field(
        default=32 * 1024, gt=0, description="An attached file larger than this goes as an artifact."
    )
    attach_max_files: int = Field(default=50, gt=0, description="At most this many files from one `@folder`.")
    approval_timeout_seconds: int | None = Field(
        default=None, gt=0, description="Approval timeout of new sessions (default: the server's)."
    )

    @field_validator("trusted_folders", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """From the environment a list is comma-separated text."""
        return (
            [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value
        )


KEYS = tuple(ChatSettings.model_fields)


class SettingsError(Exception):
    """Settings that cannot be used; each problem names where it is and the key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Layer:
    """The values one place gives, and what each is called there (a variable's or a flag's name)."""

    source: str
    values: Mapping[str, Any]
    names: Mapping[str, str]

    def where(self, key: str) -> str:
        return self.names.get(key, self.source)


@dataclass(frozen=True)
class Effective:
    """The settings in force, and for each key where its value came from."""

    settings: ChatSettings
    sources: dict[str, str]
    user_file: Path
    project_file: Path

    def rows(self) -> list[tuple[str, str, str]]:
        """(key, value as shown, source) for every key, secrets masked."""
        values = self.settings.model_dump()
        return [(key, _show(key, values[key]), self.sources.get(key, DEFAULT)) for key in KEYS]


def user_file() -> Path:
    return user_dir() / "settings.toml"


def load(project: Path, flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Effective:
    """The settings of a REPL in `project`, with the flags given (None values are flags not given).

    Raises:
        SettingsError: A file cannot be read or a value is wrong (each problem says where).
    """
    project_file = project / ".synapse" / "settings.toml"
    if project_file.resolve() == user_file().resolve():  # run in the home folder: no project file
        project_layer = Layer(shown(project_file), {}, {})
    else:
        project_layer = _file_layer(project_file)
    refused = [key for key in USER_ONLY if key in project_layer.values]
    if refused:
        raise SettingsError(
            [
                f"{project_layer.source}: {key}: only your own {shown(user_file())} may set it"
                for key in refused
            ]
        )
    layers = [
        _file_layer(user_file()),
        project_layer,
        env_layer(os.environ if env is None else env),
        Layer("flags", {k: v for k, v in flags.items() if v is not None}, FLAGS),
    ]
    settings, sources = resolve(layers)
    return Effective(settings, sources, user_file(), project_file)


def env_layer(env: Mapping[str, str]) -> Layer:
    """`SYNAPSE_CHAT_<KEY>` variables (and the shared `SYNAPSE_API_URL` / `SYNAPSE_API_KEY`)."""
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for variable, key in SHARED_ENV.items():
        if env.get(variable):
            values[key], names[key] = env[variable], f"env {variable}"
    for variable, value in env.items():
        if variable.startswith(ENV_PREFIX):
            key = variable.removeprefix(ENV_PREFIX).lower()
            values[key], names[key] = value, f"env {variable}"
    return Layer("env", values, names)


def resolve(layers: list[Layer]) -> tuple[ChatSettings, dict[str, str]]:
    """Merge the layers in order (later wins) after checking each on its own."""
    problems = [problem for layer in layers for problem in _check(layer)]
    if problems:
        raise SettingsError(problems)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.values.items():
            merged[key], sources[key] = value, layer.where(key)
    return ChatSettings.model_validate(merged), sources


def _file_layer(path: Path) -> Layer:
    try:
        return Layer(shown(path), read_toml(path), {})
    except SettingsFileError as err:
        raise SettingsError([str(err)]) from None


def _check(layer: Layer) -> list[str]:
    try:
        ChatSettings.model_validate(dict(layer.values))
    except ValidationError as err:
        return [_problem(layer, error) for error in err.errors()]
    return []


def _problem(layer: Layer, error: Any) -> str:
    key = str(error["loc"][0]) if error["loc"] else "?"
    where = layer.where(key)
    if error["type"] == "extra_forbidden":
        near = difflib.get_close_matches(key, KEYS, n=2)
        hint = f"did you mean {' or '.join(near)}?" if near else f"known keys: {', '.join(KEYS)}"
        return f"{where}: {key}: no such setting; {hint}"
    place = ".".join(str(part) for part in error["loc"])
    return f"{where}: {place}: {error['msg']} (got {error.get('input')!r})"


def _show(key: str, value: Any) -> str:
    if value is None:
        return "(not set)"
    if key in SECRET:
        return "****" + str(value)[-4:] if len(str(value)) > 8 else "****"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    return str(value).lower() if isinstance(value, bool) else str(value)
