"""The one settings class: read in entry points (worker, API, CLI) and passed down.

Workflows never read settings; what changes their behaviour reaches them as input.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Synapse configuration, from `SYNAPSE_*` environment variables (and `.env`)."""

    model_config = SettingsConfigDict(env_prefix="SYNAPSE_", env_file=".env", extra="ignore")

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

    @property
    def demo_db_url(self) -> str:
        """The SQL tool's database URL."""
        return self.sql_url or f"sqlite:///{self.data_dir / 'demo.db'}"
