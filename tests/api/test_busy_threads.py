"""The API's own requests need none of its worker threads: a message, the stream of its turn and a
decision go through while every thread FastAPI could hand work to is busy (slow uploads, store
reads). Plain-function dependencies would each wait for one."""

from __future__ import annotations

import asyncio

import httpx
from anyio.to_thread import current_default_thread_limiter

from tests.support import asked

from .test_sessions import ask_for_delete, decide, new_key


async def test_a_message_and_its_approval_go_through_while_every_api_thread_is_busy(
    http: httpx.AsyncClient,
) -> None:
    limiter = current_default_thread_limiter()
    holders = [object() for _ in range(int(limiter.total_tokens))]
    for holder in holders:
        await limiter.acquire_on_behalf_of(holder)
    try:
        assert limiter.available_tokens == 0
        async with asyncio.timeout(30):
            key = new_key()
            request = await ask_for_delete(http, key)
            response = await decide(http, key, asked(request).interaction_id, approved=True, principal="bob")
    finally:
        for holder in holders:
            limiter.release_on_behalf_of(holder)
    assert response.status_code == 200, response.text
    assert response.json()["tool_result"]["content"]["rowcount"] == 3
