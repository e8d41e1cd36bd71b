"""Two people deciding the same approval at the same moment: one wins, the other hears who did.

Each race sends two decisions at once from two separate HTTP clients: exactly one gets 200, the
other 409 naming the winner, the audit holds one decision, and the database shows the winner's
decision applied once. Either side may win. Each race has its own session and database.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from core.tls import tls_context

from .conftest import DemoDb
from .flows import ask, audit, decisions, increment, wait_answer, wait_pending

TEST_BOUND = 30.0
ORDER_ID = 1


async def race(
    base_url: str, key: str, interaction_id: str, votes: dict[str, bool]
) -> dict[str, httpx.Response]:
    """Each principal decides `interaction_id` at the same moment, from an HTTP client of their own."""
    path = f"/sessions/{key}/interactions/{interaction_id}"
    clients = {name: httpx.AsyncClient(base_url=base_url, timeout=60, verify=tls_context()) for name in votes}
    try:
        await asyncio.gather(*(http.get("/healthz") for http in clients.values()))  # connected: fair start
        answers = await asyncio.gather(
            *(
                clients[name].post(path, json={"approved": vote, "principal": name})
                for name, vote in votes.items()
            )
        )
    finally:
        await asyncio.gather(*(http.aclose() for http in clients.values()))
    return dict(zip(votes, answers, strict=True))


@pytest.mark.usefixtures("worker")
@pytest.mark.parametrize(
    ("bob", "carol"),
    [(True, True), (True, False), (False, True), (False, False), (True, False)],
    ids=["approve-approve", "approve-deny", "deny-approve", "deny-deny", "approve-deny-again"],
)
async def test_racing_decisions_have_one_winner_and_apply_once(
    api: httpx.AsyncClient, demo_db: DemoDb, bob: bool, carol: bool
) -> None:
    key = f"race-{uuid.uuid4().hex[:8]}"
    votes = {"bob": bob, "carol": carol}
    before = demo_db.amount(ORDER_ID)
    async with asyncio.timeout(TEST_BOUND):
        await ask(api, key, increment(ORDER_ID))
        interaction_id = await wait_pending(api, key)

        answers = await race(str(api.base_url), key, interaction_id, votes)

        codes = sorted(response.status_code for response in answers.values())
        assert codes == [200, 409], {name: (r.status_code, r.text) for name, r in answers.items()}
        winner = next(name for name, response in answers.items() if response.status_code == 200)
        loser = next(name for name in answers if name != winner)
        approved = votes[winner]
        outcome = answers[winner].json()
        assert (outcome["decided_by"], outcome["approved"]) == (winner, approved), outcome
        detail = answers[loser].json()["detail"]
        verb = "approved" if approved else "denied"
        assert winner in detail and loser not in detail and interaction_id in detail, detail
        assert decisions(await audit(api, key), interaction_id) == [(verb, winner, "http")]
        session = await wait_answer(api, key)
    expected = before + 1 if approved else before
    assert demo_db.amount(ORDER_ID) == expected, f"{winner} {verb} it: the amount must be {expected}"
    report = str(session.messages[-1].content)
    assert (report == "UPDATE done: 1 row affected.") if approved else (f"denied by {winner}" in report), (
        report
    )
