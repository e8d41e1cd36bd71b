"""A session's webhook hears every interaction opened, decided, escalated and timed out, signed,
retried when the receiver fails, and never holding the session up."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from api.main import create_app
from contracts import DeliveryFailed, TaskStreamChunk
from core.settings import Settings, TemporalSettings, WebhookSettings
from tests.conftest import assert_eventually
from worker import build_worker

from ..fakes.webhook import WebhookReceiver, webhook_receiver
from ..support import collect_events, event_of, serve
from .test_sessions import DELETE_CANCELLED, decide, new_key

SECRET = "hook-secret"


@pytest.fixture
def settings(tmp_path: Path, task_queue: str) -> Settings:
    """The test's settings with a webhook secret."""
    return Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(task_queue=task_queue),
        webhooks=WebhookSettings(secret=SECRET, allow="127.0.0.1"),  # the receiver is on loopback
        _env_file=None,
    )


@pytest.fixture
async def receiver() -> AsyncIterator[WebhookReceiver]:
    async with webhook_receiver() as hook:
        yield hook


def signed_correctly(headers: dict[str, str], body: bytes) -> bool:
    expected = hmac.new(
        SECRET.encode(), headers["x-synapse-timestamp"].encode() + b"." + body, hashlib.sha256
    )
    return hmac.compare_digest(headers["x-synapse-signature"], f"sha256={expected.hexdigest()}")


async def pending_id(http: httpx.AsyncClient, key: str) -> str:
    status = await assert_eventually(
        lambda: _status(http, key), lambda s: bool(s["pending_interactions"]), what="a pending request"
    )
    return str(status["pending_interactions"][0]["interaction_id"])


async def _status(http: httpx.AsyncClient, key: str) -> dict:  # type: ignore[type-arg]
    return (await http.get(f"/sessions/{key}")).json()  # type: ignore[no-any-return]


async def test_opened_and_decided_are_posted_signed_and_retried(
    http: httpx.AsyncClient, receiver: WebhookReceiver, count_orders: Callable[[str], int]
) -> None:
    receiver.answers = [503]  # the first attempt fails: the activity retries it
    key = new_key()
    created = await http.post("/sessions", json={"session_key": key, "notify_url": receiver.url})
    assert created.status_code == 201, created.text
    await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
    interaction_id = await pending_id(http, key)
    approved = await decide(http, key, interaction_id, approved=True, principal="bob")
    assert approved.status_code == 200, "the failing webhook holds nothing up"
    assert count_orders("status = 'cancelled'") == 0
    await assert_eventually(
        lambda: _events(receiver), lambda e: e == ["interaction.opened", "interaction.decided"], within=30
    )
    assert len(receiver.received) == 3, "one failed attempt, then both delivered"
    for received in receiver.received:
        assert signed_correctly(received.headers, received.body)
        assert received.json["session_key"] == key and "url" not in received.json
        assert (
            received.json["link"] == f"http://127.0.0.1:8000/ui/#/sessions/{key}?interaction={interaction_id}"
        ), "the console's page of the request (SYNAPSE_CONSOLE_URL unset: the API's own address)"
    decided = receiver.received[-1].json
    assert (
        decided["outcome"]["decided_by"] == "bob"
        and decided["interaction"]["interaction_id"] == interaction_id
    )
    assert (
        receiver.received[0].headers["x-synapse-notification-id"]
        == receiver.received[1].headers["x-synapse-notification-id"]
    ), "a retry is the same notification"


async def test_escalated_and_timed_out_are_posted(http: httpx.AsyncClient, receiver: WebhookReceiver) -> None:
    key = new_key()
    body = {
        "session_key": key,
        "notify_url": receiver.url,
        "approvers": ["carol"],
        "approval_timeout_seconds": 2,
        "policies": {"*": {"escalate_to": ["dave"], "escalate_after_seconds": 1}},
    }
    assert (await http.post("/sessions", json=body)).status_code == 201
    await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
    events = await assert_eventually(
        lambda: _events(receiver), lambda e: "interaction.timed_out" in e, within=30, what="the timeout"
    )
    assert events == ["interaction.opened", "interaction.escalated", "interaction.timed_out"]
    assert receiver.received[1].json["interaction"]["approvers"] == ["carol", "dave"]


async def test_a_webhook_needs_the_signing_secret(client: Client, settings: Settings) -> None:
    unsigned = settings.model_copy(update={"webhooks": WebhookSettings()})
    async with serve(create_app(unsigned, client=client)) as http:
        refused = await http.post(
            "/sessions", json={"session_key": new_key(), "notify_url": "http://127.0.0.1:9/x"}
        )
        assert refused.status_code == 422 and "SYNAPSE_WEBHOOK_SECRET" in refused.json()["detail"]
        bad = await http.post(
            "/sessions", json={"session_key": new_key(), "notify_url": "file:///etc/passwd"}
        )
        assert bad.status_code == 422 and "notify_url" in bad.text


async def _events(receiver: WebhookReceiver) -> list[str]:
    return receiver.events()


def unallowed(settings: Settings) -> Settings:
    """The test's settings without SYNAPSE_WEBHOOK_ALLOW: only public addresses may be called."""
    return settings.model_copy(update={"webhooks": WebhookSettings(secret=SECRET)})


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:9/internal/admin/reset?confirm=1", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://0x7f.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("https://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://192.168.0.10:8233/api/v1/namespaces", "private"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fc00::1]/", "unique-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0:7243/", "unspecified"),
        ("http://127.0.0.1./", "loopback"),
        ("http://[::1", "not a valid URL"),
        ("http://[zz]/hook", "not a valid URL"),
        ("http://hooks.example:99999/", "not a valid URL"),
        ("ftp://example.com/", "string_pattern_mismatch"),
        ("file:///etc/passwd", "string_pattern_mismatch"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "string_pattern_mismatch"),
    ],
)
async def test_a_notify_url_naming_an_internal_address_is_a_422_naming_the_field(
    client: Client, settings: Settings, url: str, why: str
) -> None:
    async with serve(create_app(unallowed(settings), client=client)) as http:
        refused = await http.post("/sessions", json={"session_key": new_key(), "notify_url": url})
    assert refused.status_code == 422, refused.text
    assert "notify_url" in refused.text and why in refused.text


async def test_a_name_is_accepted_and_judged_when_sent(
    client: Client, settings: Settings, receiver: WebhookReceiver
) -> None:
    """`localhost` is a name: the API takes it; the worker resolves it to loopback and refuses to
    send, saying so on the stream; the receiver on loopback never hears a thing."""
    unchecked = unallowed(settings)
    key = new_key()
    by_name = receiver.url.replace("127.0.0.1", "localhost")
    async with build_worker(client, unchecked), serve(create_app(unchecked, client=client)) as http:
        created = await http.post("/sessions", json={"session_key": key, "notify_url": by_name})
        assert created.status_code == 201, created.text
        await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
        chunks = await collect_events(http, key, _notify_error, within=30)
        assert (await http.get(f"/sessions/{key}")).json()["pending_interactions"], "the session goes on"
    error = event_of(chunks[-1], DeliveryFailed).reason
    assert (
        "localhost resolves to" in error
        and "a loopback address" in error
        and "SYNAPSE_WEBHOOK_ALLOW" in error
    )
    assert receiver.received == []


async def test_a_failed_delivery_shows_its_status_never_the_receivers_answer(
    time_env: WorkflowEnvironment, settings: Settings, receiver: WebhookReceiver
) -> None:
    """The receiver answers every attempt 500 with an internal service's body; once the retries
    (minutes of backoff, skipped here) are spent, the stream says 500, and nothing of the body."""
    receiver.answers = [500] * 20
    receiver.body = b'{"error": "admin token tok_INTERNAL_9f3 expired", "trace": "at /srv/internal"}'
    key = new_key()
    client = time_env.client
    body = {"session_key": key, "notify_url": receiver.url, "approval_timeout_seconds": 24 * 3600}
    async with build_worker(client, settings), serve(create_app(settings, client=client)) as http:
        created = await http.post("/sessions", json=body)
        assert created.status_code == 201, created.text
        await http.post(f"/sessions/{key}/messages", json={"content": DELETE_CANCELLED, "principal": "alice"})
        await assert_eventually(_count(receiver), bool, what="a first attempt")
        await time_env.sleep(15 * 60)
        chunks = await collect_events(http, key, _notify_error, within=60)
    error = event_of(chunks[-1], DeliveryFailed).reason
    assert "answered 500 Internal Server Error" in error, error
    assert "tok_INTERNAL" not in error and "/srv/internal" not in error and "admin token" not in error
    assert len(receiver.received) == 10, "every attempt of the retry policy was made, of one notification"


def _notify_error(chunk: TaskStreamChunk) -> bool:
    return isinstance(chunk.content, DeliveryFailed) and chunk.content.via == "webhook"


def _count(receiver: WebhookReceiver) -> Callable[[], Awaitable[int]]:
    async def count() -> int:
        return len(receiver.received)

    return count
