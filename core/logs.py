"""Logs of the worker and the API: text or JSON lines, with the ids to find them by, no secrets.

`SYNAPSE_LOG_FORMAT=json` writes one JSON object per line: `time`, `level`, `logger`, `message`
and, where the line concerns them, `session_key`, `graph_id`, `interaction_id`, `workflow_id`,
`run_id`, `workflow_type`, `activity` and `attempt`. Workflow and activity lines get the ids from
the Temporal SDK's `workflow.logger` / `activity.logger` (their `temporal_workflow` and
`temporal_activity` extras); a line about an approval passes `extra={"interaction_id": ...}`.
The default, `text`, is the one-line format the processes always wrote.

Either way every secret of the settings (API keys in clear, codec keys, chat channel secrets,
the webhook secret, `TEMPORAL_API_KEY`) is replaced by `[redacted]` wherever it would appear, and
so is any secret a caller sends whatever it is (a key Synapse never had, a signature, a token):
the value of every query parameter named like one (`api_key`, `key`, `token`, `secret`, `sign`,
`signature`, `password`, ..., also `x-api-key` or `access_token`, and percent-encoded) and of an
`Authorization` header. uvicorn's access log goes through the same redaction (`QueryRedactor` on
its loggers), in either format; its lines of successful reads and health probes are DEBUG
(`QuietPolling`), so an open REPL or console does not fill the log.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote_plus

from contracts.names import GRAPH_PREFIX, SESSION_PREFIX

from .security import keys_in_clear
from .settings import Settings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REDACTED = "[redacted]"
CONTEXT = ("session_key", "graph_id", "interaction_id")
"""Ids a log call may pass in `extra`, kept as fields of their own."""
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "sign",
        "signature",
        "password",
        "passwd",
        "authorization",
        "credential",
    }
)
"""Query parameters whose value is redacted: named one of these, or ending `_<word>` / `-<word>`."""
NOT_SECRET = frozenset({"session_key"})
"""Names ending like a secret's that are ids, kept so a line can be found by them."""
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
_PARAMETER = re.compile(r"(?<=[?&;])([^=&;\s\"'#]+)=([^&;\s\"'#]*)")
_AUTHORIZATION = re.compile(
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?)[^\s\"',}]+"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[a-z0-9._~+/=-]{4,}")
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


def is_secret_parameter(name: str) -> bool:
    """Whether a query parameter of this name carries a secret (`api_key`, `X-Api-Key`, `%61pi_key`)."""
    name = unquote_plus(name).lower()
    words = re.split(r"[^a-z0-9]+", name)
    return name not in NOT_SECRET and (words[-1] in SECRET_WORDS or "".join(words) in SECRET_WORDS)


def redact_text(text: str) -> str:
    """`text` with the values of secret query parameters and of `Authorization` headers redacted."""
    if "=" in text:
        text = _PARAMETER.sub(
            lambda m: f"{m[1]}={REDACTED}" if is_secret_parameter(m[1]) else m[0],
            text,
        )
    lowered = text.lower()
    if "authoriz" in lowered or "bearer" in lowered:
        text = _AUTHORIZATION.sub(lambda m: m[1] + REDACTED, text)
        text = _BEARER.sub(lambda m: m[1] + REDACTED, text)
    return text


class QueryRedactor(logging.Filter):
    """Redacts secrets callers send (query parameters, `Authorization`) in a record's message and
    arguments before any handler formats it: for uvicorn's loggers, whose own handlers (the text
    format) never pass through `Redacting`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_text(a) if isinstance(a, str) else a for a in record.args)
        return True


HEALTH_PATHS = ("/healthz", "/readyz", "/metrics")
"""Probes of load balancers, `synapse up` and scrapers: their access lines are DEBUG whatever the answer."""


class QuietPolling(logging.Filter):
    """uvicorn's access line of a read that succeeded (a GET answered below 400) or of a health
    probe, at DEBUG: an open REPL reads its session every few seconds and a console its pages,
    which would fill the log. What changes something, and every error, stays at INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not (isinstance(args, tuple) and len(args) == 5):
            return True
        _client, method, path, _version, status = args
        probe = str(path).split("?", 1)[0] in HEALTH_PATHS
        if method != "GET" or not (probe or (isinstance(status, int) and status < 400)):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


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
        return redact_text(text)


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
    redact_uvicorn_logs()


def redact_uvicorn_logs() -> None:
    """Put `QueryRedactor` on uvicorn's loggers and `QuietPolling` on its access log (once):
    `configure_logging` does, and so does
    `create_app` for `uvicorn api.main:create_app --factory`, whose logging Synapse never set up.
    A logger's filters outlive uvicorn's own `dictConfig`, whenever that runs."""
    for name in UVICORN_LOGGERS:
        named = logging.getLogger(name)
        if not any(isinstance(f, QueryRedactor) for f in named.filters):
            named.addFilter(QueryRedactor())
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, QuietPolling) for f in access.filters):
        access.addFilter(QuietPolling())
