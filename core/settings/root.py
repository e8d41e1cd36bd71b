"""`Settings`, the one settings object: its own fields, its groups, and where they are read from."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources import EnvSettingsSource

from .api import ApiSettings
from .artifacts import ArtifactSettings
from .dingtalk import DingTalkSettings
from .group import Group
from .lark import LarkSettings
from .limits import LimitSettings
from .links import console_link
from .source import GroupedVariables
from .temporal import TemporalSettings
from .tools import ToolSettings
from .webhooks import WebhookSettings


class Settings(BaseSettings):
    """Synapse configuration, from environment variables (and `.env`), grouped by concern."""

    model_config = SettingsConfigDict(
        env_prefix="SYNAPSE_", env_file=".env", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(default=Path(".synapse"), description="Where state lives (SYNAPSE_DATA_DIR).")
    agents_file: Path | None = Field(
        default=None,
        description="TOML file declaring agents and groups (SYNAPSE_AGENTS_FILE); `./synapse.toml` or "
        "`~/.synapse/agents.toml` when unset (see core/agent_registry.py).",
    )
    console_url: str | None = Field(
        default=None,
        description="Public URL of the web console (SYNAPSE_CONSOLE_URL), for the links in webhook "
        "notifications and Lark cards; `http://<api host>:<api port>/ui/` when unset.",
    )
    rules_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the approval rules every API and worker shares (SYNAPSE_RULES_URL); "
        "`sqlite:///<data_dir>/rules.db` when unset.",
    )
    experience_url: str | None = Field(
        default=None,
        pattern=r"^(sqlite|postgresql)(\+\w+)?://",
        description="Where finished turns are indexed for recall (SYNAPSE_EXPERIENCE_URL): "
        "`postgresql://user:password@host/db` to share it between machines, or `sqlite:///path`; "
        "`sqlite:///<data_dir>/experience.db` when unset.",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines of the worker and the API (SYNAPSE_LOG_FORMAT): `text`, or `json` (one "
        "object per line with session key, graph id, interaction id; see core/logs.py).",
    )
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    artifacts: ArtifactSettings = Field(default_factory=ArtifactSettings)
    lark: LarkSettings = Field(default_factory=LarkSettings)
    dingtalk: DingTalkSettings = Field(default_factory=DingTalkSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)

    def console_link(self, workflow_id: str, interaction_id: str | None = None) -> str:
        """Where the workflow `workflow_id` is opened in the web console (`console_url`, else the
        API's `/ui/`), at one of its requests (see `links.py`)."""
        return console_link(
            self.console_url or f"http://{self.api.host}:{self.api.port}/ui/", workflow_id, interaction_id
        )

    @property
    def demo_db_url(self) -> str:
        """The SQL tool's database URL."""
        return self.tools.sql_url or f"sqlite:///{self.data_dir / 'demo.db'}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments first, then the environment, then `.env`; group fields from flat variables."""
        assert isinstance(env_settings, EnvSettingsSource) and isinstance(dotenv_settings, EnvSettingsSource)
        grouped = GroupedVariables(settings_cls, env_settings, dotenv_settings)
        return init_settings, env_settings, grouped, dotenv_settings, file_secret_settings


def variable_of(loc: tuple[int | str, ...]) -> str:
    """The environment variable behind a settings field location, e.g. `("api", "port")`."""
    if len(loc) >= 2 and loc[0] in Settings.model_fields:
        group = Settings.model_fields[str(loc[0])].annotation
        if isinstance(group, type) and issubclass(group, Group) and loc[1] in group.model_fields:
            alias = group.model_fields[str(loc[1])].validation_alias
            if isinstance(alias, AliasChoices) and len(alias.choices) > 1:
                return str(alias.choices[1])
    return f"SYNAPSE_{str(loc[0]).upper()}" if loc else "a setting"
