"""The one settings class: read in entry points (worker, API, CLI) and passed down.

Workflows never read settings; what changes their behaviour reaches them as input.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Synapse configuration, from `SYNAPSE_*` environment variables (and `.env`)."""

    model_config = SettingsConfigDict(
        env_prefix="SYNAPSE_", env_file=".env", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(default=Path(".synapse"), description="Where state lives.")
    api_host: str = Field(default="127.0.0.1", description="Interface the API binds to.")
    api_port: int = Field(default=8000, description="Port of the HTTP API.")
    temporal_port: int = Field(default=7233, description="gRPC port of the embedded dev server.")
    ui_port: int = Field(default=8233, description="Port of the embedded Temporal Web UI.")
    task_queue: str = Field(default="synapse", description="Task queue of workers and clients.")
    sql_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the `sql` tool's database; "
        "`sqlite:///<data_dir>/demo.db` (seeded with `orders`) when unset.",
    )
    sql_max_rows: int = Field(default=100, gt=0, description="Rows a SQL result keeps.")
    decision_wait_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long `POST .../interactions/{id}` waits for the outcome (tool run included) "
        "before answering 202.",
    )
    busy_retry_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How long a message, pause, resume or cancel that Temporal refuses for lack of "
        "room (RESOURCE_EXHAUSTED) is retried before the API answers 503 (decisions retry for "
        "`decision_wait_seconds`).",
    )
    sse_client_buffer: int = Field(
        default=500,
        gt=0,
        description="Events an SSE client may fall behind before it is dropped with a `reconnect` "
        "event (it resumes with Last-Event-ID; the others never wait for it).",
    )
    agents_file: Path | None = Field(
        default=None,
        description="TOML file declaring agents and groups; `./synapse.toml` or "
        "`~/.synapse/agents.toml` when unset (see cli/agent_registry.py).",
    )
    api_keys: str | None = Field(
        default=None,
        description="`key:principal:role` entries separated by commas; when set, every "
        "request needs `Authorization: Bearer <key>` (roles: viewer, operator, approver, admin).",
    )

    lark_app_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LARK_APP_ID", "SYNAPSE_LARK_APP_ID"),
        description="Lark/Feishu app id; the Lark channel is on when it is set.",
    )
    lark_app_secret: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LARK_APP_SECRET", "SYNAPSE_LARK_APP_SECRET"),
        description="App secret.",
    )
    lark_verification_token: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LARK_VERIFICATION_TOKEN", "SYNAPSE_LARK_VERIFICATION_TOKEN"),
        description="Event subscription verification token.",
    )
    lark_encrypt_key: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LARK_ENCRYPT_KEY", "SYNAPSE_LARK_ENCRYPT_KEY"),
        description="Event encrypt key (payload encryption and request signatures).",
    )
    lark_domain: str = Field(
        default="https://open.feishu.cn",
        validation_alias=AliasChoices("LARK_DOMAIN", "SYNAPSE_LARK_DOMAIN"),
        description="Open API base URL: Feishu, Lark international (https://open.larksuite.com), or any URL.",
    )
    lark_admins: str = Field(
        default="",
        validation_alias=AliasChoices("LARK_ADMINS", "SYNAPSE_LARK_ADMINS"),
        description="Comma-separated open_ids who may approve any request in Lark chats.",
    )
    lark_bot_open_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LARK_BOT_OPEN_ID", "SYNAPSE_LARK_BOT_OPEN_ID"),
        description="The bot's open_id: in groups only mentions of it count (any mention when unset).",
    )
    lark_mode: str = Field(
        default="webhook",
        validation_alias=AliasChoices("LARK_MODE", "SYNAPSE_LARK_MODE"),
        description="`webhook` (events POSTed to /channels/lark/events) or `websocket` (the SDK's long connection).",
    )

    @property
    def lark_enabled(self) -> bool:
        """The Lark channel is on when an app id is configured."""
        return bool(self.lark_app_id)

    @property
    def demo_db_url(self) -> str:
        """The SQL tool's database URL."""
        return self.sql_url or f"sqlite:///{self.data_dir / 'demo.db'}"
