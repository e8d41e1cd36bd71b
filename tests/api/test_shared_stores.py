"""Synapse on a shared PostgreSQL: `SYNAPSE_SQL_URL`, `SYNAPSE_RULES_URL` and
`SYNAPSE_EXPERIENCE_URL` all name one database (an operator's, with its `orders`), and a session
driven over HTTP uses it for all three. Skipped, saying why, where PostgreSQL is not installed."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine, inspect, text

from activities.tools.sql.database import SqlDatabase
from core.database import engine_for
from core.rules.store import RuleStore
from core.settings import Settings

from ..conftest import assert_eventually
from ..faults.flows import ask, audit, decisions, tool_results, wait_answer, wait_pending
from ..postgres import PostgresServer
from .test_sessions import new_key


@pytest.fixture
def shared(postgres: PostgresServer) -> Iterator[Engine]:
    """A new database holding an operator's `orders` (the demo rows) and nothing of Synapse's."""
    url = postgres.new_database().replace("postgresql+psycopg://", "postgresql://")
    seeding = SqlDatabase(url)
    seeding.prepare()
    seeding.close()
    engine = engine_for(url)
    with engine.begin() as db:
        db.execute(text("DROP TABLE synapse_tool_runs"))
    yield engine
    engine.dispose()


@pytest.fixture
def settings(settings: Settings, shared: Engine) -> Settings:
    url = shared.url.render_as_string(hide_password=False)
    return settings.model_copy(
        update={
            "tools": settings.tools.model_copy(update={"sql_url": url}),
            "rules_url": url,
            "experience_url": url,
        }
    )


def cancelled(engine: Engine) -> int:
    with engine.connect() as db:
        return int(db.execute(text("SELECT count(*) FROM orders WHERE status = 'cancelled'")).scalar_one())


async def test_a_session_applies_decides_and_remembers_in_the_shared_database(
    http: httpx.AsyncClient, settings: Settings, shared: Engine
) -> None:
    key = new_key()
    await ask(http, key, "DELETE FROM orders WHERE status = 'cancelled'")
    interaction_id = await wait_pending(http, key)
    assert cancelled(shared) == 3, "nothing runs before the approval"

    decided = await http.post(
        f"/sessions/{key}/interactions/{interaction_id}", json={"approved": True, "principal": "bob"}
    )
    assert decided.status_code in (200, 202), decided.text
    session = await wait_answer(http, key)

    [result] = tool_results(session)
    assert result["ok"] is True and result["content"]["rowcount"] == 3
    assert cancelled(shared) == 0
    assert decisions(await audit(http, key), interaction_id) == [("approved", "bob", "http")]
    with shared.connect() as db:
        claims = db.execute(text("SELECT interaction_id, tool_id FROM synapse_tool_runs")).all()
    assert len(claims) == 1 and claims[0].tool_id == "sql", "the approved statement is claimed once"

    rule = await http.post(
        "/rules", json={"tool": "sql", "decision": "allow", "scope": "global", "reason": "trusted"}
    )
    assert rule.status_code == 201, rule.text
    assert [r.rule_id for r in RuleStore.at(settings.rules_url, settings.data_dir).all()] == [
        rule.json()["rule_id"]
    ]
    await ask(http, key, "UPDATE orders SET status = 'paid' WHERE id = 5")
    session = await wait_answer(http, key)
    assert session.pending_interactions == [] and tool_results(session)[-1]["content"]["rowcount"] == 1, (
        "the rule in the shared database allowed it without asking"
    )

    async def recalled() -> list[dict[str, object]]:
        found: list[dict[str, object]] = (
            await http.get("/experience", params={"query": "cancelled orders"})
        ).json()
        return found

    matches = await assert_eventually(recalled, bool, what="the turn recalled")
    assert (
        matches[0]["owner_id"] == f"session:{key}"
        and matches[0]["question"] == "DELETE FROM orders WHERE status = 'cancelled'"
    )
    assert set(inspect(shared).get_table_names()) == {
        "orders",
        "synapse_tool_runs",
        "approval_rules",
        "experience_turns",
        "experience_words",
    }
