"""Log lines: JSON with the ids to find them by (SYNAPSE_LOG_FORMAT=json), and never a secret."""

from __future__ import annotations

import base64
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from api.main import create_app
from core.logs import (
    REDACTED,
    JsonLines,
    Redacting,
    configure_logging,
    formatter,
    redact_uvicorn_logs,
    secrets_of,
)
from core.settings import ApiSettings, LarkSettings, Settings, TemporalSettings
from tests.support import asked, serve
from worker import build_worker

from ..api.test_sessions import ask_for_delete, decide, new_key


def record(message: str = "hello", /, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("synapse.test", logging.INFO, __file__, 1, message, None, None)
    made.__dict__.update(extra)
    return made


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, {}),
        (
            {
                "temporal_workflow": {
                    "workflow_id": "session:s-1",
                    "run_id": "r",
                    "workflow_type": "SessionWorkflow",
                }
            },
            {
                "session_key": "s-1",
                "workflow_id": "session:s-1",
                "run_id": "r",
                "workflow_type": "SessionWorkflow",
            },
        ),
        (
            {
                "temporal_activity": {
                    "workflow_id": "graph:g-9:task:t:v1",
                    "activity_type": "agent_step",
                    "attempt": 2,
                }
            },
            {"graph_id": "g-9", "activity": "agent_step", "attempt": 2},
        ),
        (
            {
                "temporal_activity": {"workflow_id": "session:s-2", "workflow_run_id": "r2"},
                "interaction_id": "tool_3",
            },
            {"session_key": "s-2", "run_id": "r2", "interaction_id": "tool_3"},
        ),
        ({"graph_id": "g-1", "interaction_id": "gate_1"}, {"graph_id": "g-1", "interaction_id": "gate_1"}),
    ],
)
def test_a_json_line_carries_the_ids_of_what_it_concerns(
    extra: dict[str, object], expected: dict[str, object]
) -> None:
    line = json.loads(JsonLines().format(record(**extra)))
    assert line["message"] == "hello" and line["level"] == "INFO" and line["logger"] == "synapse.test"
    assert expected.items() <= line.items()
    for field in {"session_key", "graph_id", "interaction_id"} - set(expected):
        assert field not in line


def test_every_secret_of_the_settings_is_redacted_and_a_digest_is_not_a_secret() -> None:
    codec = base64.b64encode(os.urandom(32)).decode()
    settings = Settings(
        api=ApiSettings(keys=f"clear-key-1234:ops:admin,sha256:{'ab' * 32}:bob:viewer"),
        temporal=TemporalSettings(codec_keys=f"k1:{codec}"),
        lark=LarkSettings(app_secret="lark-secret-5678"),
        _env_file=None,
    )
    secrets = secrets_of(settings, env={"TEMPORAL_API_KEY": "cloud-key-9999"})
    assert set(secrets) == {"clear-key-1234", codec, "lark-secret-5678", "cloud-key-9999"}
    said = "keys clear-key-1234 and " + codec + " and lark-secret-5678 and cloud-key-9999 and " + "ab" * 32
    for inner in (JsonLines(), logging.Formatter("%(message)s")):
        text = Redacting(inner, secrets).format(record(said))
        assert all(secret not in text for secret in secrets) and text.count(REDACTED) == 4
        assert "ab" * 32 in text


@pytest.fixture
def json_lines(settings: Settings) -> Iterator[list[dict[str, object]]]:
    """Every line the process logs while the test runs, as SYNAPSE_LOG_FORMAT=json writes it."""
    lines: list[dict[str, object]] = []
    rendering = formatter(settings.model_copy(update={"log_format": "json"}))

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(rendering.format(record)))

    keep = Keep(level=logging.INFO)
    root = logging.getLogger()
    level = root.level
    root.addHandler(keep)
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(keep)
        root.setLevel(level)


async def test_the_tool_run_of_an_approval_logs_its_session_and_interaction(
    client: Client, settings: Settings, json_lines: list[dict[str, object]]
) -> None:
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
        key = new_key()
        request = await ask_for_delete(http, key)
        interaction_id = asked(request).interaction_id
        assert (await decide(http, key, interaction_id, approved=True)).status_code == 200
    ran = [line for line in json_lines if str(line["message"]).startswith("running sql")]
    assert len(ran) == 1, json_lines
    assert ran[0]["session_key"] == key and ran[0]["interaction_id"] == interaction_id
    assert ran[0]["activity"] == "run_tool" and ran[0]["workflow_id"] == f"session:{key}"


async def test_info_lines_carry_no_sql_text(
    client: Client, settings: Settings, json_lines: list[dict[str, object]]
) -> None:
    planted = f"planted-{new_key()}"
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
        key = new_key()
        read = await http.post(
            f"/sessions/{key}/messages",
            params={"wait": "true"},
            json={"content": f"SELECT count(*) FROM orders WHERE customer = '{planted}'"},
        )
        assert read.status_code == 200 and read.json()["answer"].startswith("SELECT returned"), read.text
        request = await ask_for_delete(http, key)
        assert (await decide(http, key, asked(request).interaction_id, approved=True)).status_code == 200
    said = [json.dumps(line) for line in json_lines]
    assert any("running sql" in line for line in said) and any("assessed sql" in line for line in said)
    assert not [line for line in said if planted in line or "DELETE FROM" in line]


def test_configure_logging_writes_json_lines_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure_logging(Settings(data_dir=tmp_path, log_format="json", _env_file=None))
        logging.getLogger("synapse.test").info("ready", extra={"session_key": "s-7"})
    finally:
        root.handlers[:], root.level = handlers, level
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["message"] == "ready" and line["session_key"] == "s-7"


@pytest.mark.parametrize(
    ("method", "path", "status", "logged"),
    [
        ("GET", "/sessions/chat-1", 200, False),  # an open REPL's heartbeat
        ("GET", "/readyz", 503, False),  # `synapse up` waiting for the worker
        ("GET", "/sessions/nope", 404, True),
        ("POST", "/sessions/chat-1/messages", 202, True),
    ],
)
def test_polls_are_debug_and_changes_and_errors_stay_info(
    method: str, path: str, status: int, logged: bool, caplog: pytest.LogCaptureFixture
) -> None:
    access = logging.getLogger("uvicorn.access")
    redact_uvicorn_logs()  # as `configure_logging` does
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", method, path, "1.1", status)

    assert [r.levelname for r in caplog.records if r.name == "uvicorn.access"] == (["INFO"] if logged else [])
