"""Logs of the worker and the API: text or JSON lines, with the ids to find them by, no secrets.

`SYNAPSE_LOG_FORMAT=json` writes one JSON object per line: `time`, `level`, `logger`, `message`
and, where the line concerns them, `session_key`, `graph_id`, `interaction_id`, `workflow_id`,
`run_id`, `workflow_type`, `activity` and `attempt`. Workflow and activity lines get the ids from
the Temporal SDK's `workflow.logger` / `activity.logger` (their `temporal_workflow` and
`temporal_activity` extras); a line about an approval passes `extra={"interaction_id": ...}`.
The default, `text`, is the one-line format the processes always wrote.

Either way every secret of the settings (API keys in clear, codec keys, chat channel secrets,
the webhook secret, `TEMPORAL_API_KEY`) is replaced by `[redacted]` wherever it would appear.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from contracts.names import GRAPH_PREFIX, SESSION_PREFIX

from .security import keys_in_clear
from .settings import Settings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REDACTED = "[redacted]"
CONTEXT = ("session_key", "graph_id", "interaction_id")
"""Ids a log call may pass in `extra`, kept as fields of their own."""
OWNERS = {SESSION_PREFIX: "session_key", GRAPH_PREFIX: "graph_id"}
"""Workflow id prefixes and the field the rest of the id fills (a task run's `graph:<uuid>:task:…`
gives its graph's id)."""


def secrets_of(settings: Settings, env: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value the settings (and `TEMPORAL_API_KEY`) hold, longest first."""
    env = os.environ if env is None else env
    found: list[str] = []
    if settings.api.keys:
        found += keys_in_clear(settings.api.keys)
    if settings.temporal.codec_keys:
        found += [entry.partition(":")[2].strip() for entry in settings.temporal.codec_keys.split(",")]
    found += [
        value
        for value in (
            settings.webhooks.secret,
            settings.lark.app_secret,
            settings.lark.verification_token,
            settings.lark.encrypt_key,
            settings.dingtalk.client_secret,
            env.get("TEMPORAL_API_KEY"),
        )
        if value
    ]
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


class Redacting(logging.Formatter):
    """Formats with `inner`, then replaces each secret by `[redacted]`."""

    def __init__(self, inner: logging.Formatter, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner
        self.secrets = list(secrets)

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record)
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


class JsonLines(logging.Formatter):
    """One JSON object per record, with the ids of what it concerns."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        workflow = getattr(record, "temporal_workflow", None) or {}
        activity = getattr(record, "temporal_activity", None) or {}
        fields = {"workflow_id": "workflow_id", "run_id": "run_id", "workflow_run_id": "run_id"}
        fields |= {"workflow_type": "workflow_type", "activity_type": "activity", "attempt": "attempt"}
        for source in (workflow, activity):
            for name, field in fields.items():
                if source.get(name) is not None:
                    line[field] = source[name]
        owner = str(line.get("workflow_id", ""))
        for prefix, field in OWNERS.items():
            if owner.startswith(prefix):
                line[field] = owner.removeprefix(prefix).split(":", 1)[0]
        for field in CONTEXT:
            if getattr(record, field, None) is not None:
                line[field] = getattr(record, field)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def formatter(settings: Settings) -> logging.Formatter:
    """The formatter `SYNAPSE_LOG_FORMAT` asks for, redacting the settings' secrets."""
    inner = JsonLines() if settings.log_format == "json" else logging.Formatter(TEXT_FORMAT)
    return Redacting(inner, secrets_of(settings))


def configure_logging(settings: Settings, level: int = logging.INFO) -> None:
    """Log to stderr at `level` in the format the settings ask for (replaces earlier handlers)."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(settings))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
