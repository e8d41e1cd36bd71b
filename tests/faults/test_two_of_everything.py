"""Two workers and two API processes on one dev server and one database; one of each is killed with
SIGKILL mid-traffic, and 100 sessions still end answered, each approval applied exactly once.

Every session asks to add 1 to order 1's amount, is approved, and reports the result: the amount
must end exactly 100 higher (a lost approval shows as 99, one applied twice as 101), and each
session's audit holds its one approval. The people (this test) reach the APIs as a load balancer
would: a request goes to the next API that answers; one the killed API refused goes to the other.
A message is sent again only if the session does not hold it (the check a careful client makes
after a lost answer); a decision may be repeated (a second one is refused, 409, and changes nothing).
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from contracts import AuditTrail, LiveSession
from core.settings import Settings

from ..conftest import assert_eventually
from .conftest import DemoDb
from .flows import RECOVERY_WITHIN, answered, decisions, increment, tool_results
from .processes import Children, start_api, start_worker

SESSIONS = 100
AT_ONCE = 20
KILL_AFTER = 30
"""Sessions answered before one worker and one API are killed."""
ORDER = 1


class Apis:
    """The API processes, reached as through a load balancer."""

    def __init__(self, urls: list[str]) -> None:
        self.clients = [httpx.AsyncClient(base_url=url, timeout=30) for url in urls]
        self._turn = itertools.cycle(range(len(urls)))

    async def request(self, method: str, path: str, *, resend: bool = True, **body: Any) -> httpx.Response:
        """Send to the next API; if it refuses the connection, to the other ones. A request whose
        answer was lost on the way (the API died while it ran) is sent again only if `resend`
        (it may have been applied)."""
        first = next(self._turn)
        errors: list[str] = []
        for offset in range(len(self.clients)):
            client = self.clients[(first + offset) % len(self.clients)]
            try:
                return await client.request(method, path, **body)
            except httpx.ConnectError as err:
                errors.append(f"{client.base_url}: {err!r}")
            except httpx.TransportError as err:
                errors.append(f"{client.base_url}: {err!r}")
                if not resend:
                    break
        raise AssertionError(f"no answer to {method} {path}: {errors}")

    async def session(self, key: str) -> LiveSession:
        response = await self.request("GET", f"/sessions/{key}", timeout=5)
        assert response.status_code == 200, response.text
        return LiveSession.model_validate(response.json())

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


async def send_once(apis: Apis, key: str, content: str) -> None:
    """Send `content` to `key`. Without a 202 (a refused connection, a 503 for a command Temporal
    did not confirm), read the session until it answers and send again only if it lacks the message."""
    try:
        response = await apis.request(
            "POST", f"/sessions/{key}/messages", resend=False, json={"content": content}
        )
        if response.status_code == 202:
            return
    except AssertionError:  # no API answered, or the answer was lost
        pass

    async def holds() -> bool:
        response = await apis.request("GET", f"/sessions/{key}", timeout=5)
        if response.status_code == 404:
            return False
        assert response.status_code == 200, response.text
        session = LiveSession.model_validate(response.json())
        return any(m.role == "user" and m.content == content for m in session.messages)

    held = await assert_eventually(holds, lambda _: True, within=RECOVERY_WITHIN, what=f"{key} readable")
    if not held:
        await send_once(apis, key, content)


async def eventually(
    probe: Callable[[], Awaitable[LiveSession]], check: Callable[[LiveSession], bool], what: str
) -> LiveSession:
    return await assert_eventually(probe, check, within=RECOVERY_WITHIN, interval=0.2, what=what)


async def one_session(apis: Apis, key: str) -> str:
    """Ask for the increment, approve it (repeating the decision if its answer is lost), wait for
    the agent's report; the approval's interaction id."""
    await send_once(apis, key, increment(ORDER))
    waiting = await eventually(
        lambda: apis.session(key), lambda s: bool(s.pending_interactions), f"{key} asks"
    )
    interaction_id = waiting.pending_interactions[0].interaction_id

    async def approved() -> int:
        path = f"/sessions/{key}/interactions/{interaction_id}"
        return (await apis.request("POST", path, json={"approved": True, "principal": "bob"})).status_code

    await assert_eventually(
        approved, lambda code: code in (200, 202, 409), within=RECOVERY_WITHIN, what=f"{key} approved"
    )
    await eventually(lambda: apis.session(key), answered, f"{key} answered")
    return interaction_id


@pytest.mark.slow(seconds=90)
async def test_a_killed_worker_and_api_lose_no_session_and_apply_every_approval_once(
    client: Client, settings: Settings, children: Children, demo_db: DemoDb
) -> None:
    before = demo_db.amount(ORDER)
    workers = [await start_worker(children, client, settings) for _ in range(2)]
    started = [await start_api(children, client, settings) for _ in range(2)]
    apis = Apis([url for _, url in started])
    keys = [f"two-{uuid.uuid4().hex[:8]}-{n}" for n in range(SESSIONS)]
    room = asyncio.Semaphore(AT_ONCE)
    asked: dict[str, str] = {}
    done = 0
    kill_now = asyncio.Event()

    async def run(key: str) -> None:
        nonlocal done
        async with room:
            asked[key] = await one_session(apis, key)
        done += 1
        if done == KILL_AFTER:
            kill_now.set()

    async def killer() -> None:
        await kill_now.wait()
        await workers[0].kill()
        await started[0][0].kill()

    try:
        async with asyncio.timeout(300):
            await asyncio.gather(killer(), *(run(key) for key in keys))
        assert workers[1].popen.poll() is None and started[1][0].popen.poll() is None, "the others still run"
        for key in keys:
            session = await apis.session(key)
            results = tool_results(session)
            assert len(results) == 1 and results[0]["ok"] is True, (key, results)
            trail = await apis.request("GET", f"/sessions/{key}/audit")
            assert trail.status_code == 200, trail.text
            recorded = decisions(AuditTrail.model_validate(trail.json()), asked[key])
            assert [kind for kind, _, _ in recorded] == ["approved"], (key, recorded)
        assert demo_db.amount(ORDER) == before + SESSIONS
    finally:
        await apis.aclose()
