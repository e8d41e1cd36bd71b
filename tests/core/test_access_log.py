"""The access log never holds a secret a caller sent: the API as a real process (`synapse api` in
both log formats, and a bare `uvicorn --factory`) is asked with keys, signatures and tokens in the
query and in `Authorization`."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from core.logs import REDACTED, QueryRedactor, Redacting, redact_text
from core.security import new_key
from core.settings import Settings
from core.tls import tls_context
from tests.conftest import assert_eventually

from ..faults.processes import Children, worker_env
from ..support import free_port

API_READY_WITHIN = 60.0
"""Seconds `synapse api` gets to answer /healthz (cold imports on 2 busy cores)."""


SERVED_BY = {
    "synapse api": ["-m", "cli.main", "api", "--port"],
    "uvicorn --factory": ["-m", "uvicorn", "api.main:create_app", "--factory", "--port"],
}
"""The ways README and `api/main.py` give to serve the API, as argv after the interpreter."""


@pytest.mark.parametrize(
    ("served_by", "log_format"),
    [("synapse api", "text"), ("synapse api", "json"), ("uvicorn --factory", "text")],
)
async def test_the_access_log_of_the_api_holds_no_key_signature_or_token(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    served_by: str,
    log_format: str,
) -> None:
    children = Children(tmp_path)
    request.addfinalizer(children.kill_all)  # pass or fail, nothing outlives the test
    key, entry = new_key("alice", "viewer")
    port = free_port()
    env = worker_env(
        client.service_client.config.target_host,
        settings,
        SYNAPSE_API_KEYS=entry,
        SYNAPSE_LOG_FORMAT=log_format,
    )
    api = children.start("api", [sys.executable, *SERVED_BY[served_by], str(port)], env)
    planted = {
        "api_key": key,
        "sign": "sig-4c1d9e7f0b2a",
        "token": "tok-8e2f6a1c3d5b",
        "secret": "sec-0a9b8c7d6e5f",
        "%61pi_key": "enc-7f6e5d4c3b2a",
        "access_token": "acc-1a2b3c4d5e6f",
    }
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=10, verify=tls_context()
    ) as http:

        async def healthy() -> int:
            api.check_running()
            try:
                return (await http.get("/healthz")).status_code
            except httpx.TransportError:
                return 0

        await assert_eventually(healthy, lambda code: code == 200, within=API_READY_WITHIN, what="/healthz")
        refused = await http.get(f"/me?api_key={key}&x=1")
        assert refused.status_code == 401, "a key in the query is not a way in"
        for name, value in planted.items():
            await http.get(f"/me?{name}={value}&x=1")
        me = await http.get("/me?x=2", headers={"Authorization": f"Bearer {key}"})
        assert me.status_code == 200 and me.json()["principal"] == "alice"
        await http.get("/me?last=1")  # a refused read: logged at INFO (probes and good reads are DEBUG)
        await api.wait_for_output("/me?last=1", within=30)
    log = api.output()
    assert "GET /me?api_key=" in log and "&x=1" in log, "the request is logged, its other parameters kept"
    assert log.count(f"={REDACTED}&x=1") >= len(planted) + 1, log
    for value in planted.values():
        assert value not in log
    assert "Bearer" not in log


def test_secret_parameters_and_authorization_are_redacted_others_kept() -> None:
    line = (
        '127.0.0.1:5 - "GET /me?api_key=K1&X-Api-Key=K2&key=K3&token=K4&secret=K5&sign=K6&signature=K7'
        '&client_secret=K8&%61pi_key=K9&keyboard=q&design=d&limit=10&session_key=s-1 HTTP/1.1" 401 '
        "{'authorization': 'Bearer K10'} AUTHORIZATION: BASIC K11"
    )
    redacted = redact_text(line)
    assert all(f"K{n}" not in redacted for n in range(1, 12)), redacted
    assert "keyboard=q&design=d&limit=10&session_key=s-1" in redacted and redacted.count(REDACTED) == 11


def test_the_redactor_changes_uvicorns_access_record_before_any_handler_formats_it() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/me?token=t0k3n&x=1", "1.1", 401), None,
    )  # fmt: skip
    assert QueryRedactor().filter(record)
    assert record.getMessage() == f'127.0.0.1:5 - "GET /me?token={REDACTED}&x=1 HTTP/1.1" 401'
    said = logging.LogRecord("httpx", logging.INFO, __file__, 1, "POST http://h/?sign=s1gn", None, None)
    assert Redacting(logging.Formatter("%(message)s"), []).format(said) == f"POST http://h/?sign={REDACTED}"
