"""Realistic data for the fuzzer: things that exist, so its cases reach past the 404s.

Through the HTTP API, as a user would: sessions of every demo agent, some waiting for an approval,
one with a grant; a graph with a task behind a gate and one that ran; a rule; an artifact. What
comes back are the ids, by the parameter that takes them; `config` binds them in schemathesis'
configuration, so most generated cases use one of them and the rest stay random.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from contracts import LiveSession, NewRule, RuleDecision, RuleScope
from core.client import SynapseClient
from tests.conftest import assert_eventually

DELETE = "DELETE FROM orders WHERE status = 'cancelled'"
"""SQL that needs a person's yes (the demo agents run what they are sent)."""
UPDATE = "UPDATE orders SET status = 'shipped' WHERE id = 1"
"""Another, which a grant for `DELETE FROM orders ...` does not cover."""
AGENTS = ["Agent:demo", "Agent:demo-adk", "Agent:demo-langgraph", "Agent:demo-autogen"]

Known = dict[str, list[str]]
"""Existing values by binding key: `path.key`, `body.target_task_uuid`, ..."""

PROBABILITY = 0.8
"""How often a bound parameter takes one of the known values (otherwise: generated)."""


async def seed(base_url: str, *, api_key: str | None = None) -> Known:
    """Create the data through the API at `base_url`; the ids of what now exists."""
    async with SynapseClient(base_url, api_key=api_key) as synapse:
        keys: list[str] = []
        for agent in AGENTS:
            keys.append(
                (await synapse.create_session(f"fuzz-{uuid.uuid4().hex[:8]}", agent_id=agent)).session_id
            )
        waiting = [await _waiting(synapse, key) for key in keys[:3]]
        granted = keys[0]
        first = waiting[0].pending_interactions[0].interaction_id
        await synapse.decide(granted, first, approved=True, response_data={"grant": "session_prefix"})
        grants = await assert_eventually(lambda: synapse.grants(granted), lambda page: bool(page.grants))
        interactions = [w.pending_interactions[0].interaction_id for w in waiting[1:]]
        again = await _waiting(synapse, granted, UPDATE)
        interactions.append(again.pending_interactions[0].interaction_id)

        graph = await synapse.submit_graph(
            {
                "new_tasks": [
                    {"task_id": "look", "assignee_id": "Agent:demo", "input_data": {"echo": "orders"}},
                    {
                        "task_id": "clean",
                        "assignee_id": "Agent:demo",
                        "input_data": {"echo": "clean"},
                        "directives": {"human_interaction": {"prompt": "Clean the orders?"}},
                    },
                ],
                "new_edges": [{"source_task_id": "look", "target_task_id": "clean"}],
            }
        )
        view = await assert_eventually(
            lambda: synapse.graph(graph.graph_id),
            lambda view: bool(view.pending_interactions),
            what="the graph's gate to open",
        )
        gates = [request.interaction_id for request in view.pending_interactions]
        rule = await synapse.add_rule(
            NewRule(
                tool="sql",
                decision=RuleDecision.ASK,
                scope=RuleScope.GLOBAL,
                reason="fuzz: orders need a look",
            )
        )
        artifact = await synapse.upload_artifact(
            b"order 7: refund", name="notes.txt", media_type="text/plain"
        )
    tasks = [task.task_uuid for task in view.tasks]
    return {
        "path.key": keys,
        "path.interaction_id": interactions + gates,
        "body.interaction_id": interactions + gates,
        "path.graph_id": [graph.graph_id],
        "path.task_uuid": tasks,
        "body.target_task_uuid": tasks,
        "path.grant_id": [grant.grant_id for grant in grants.grants],
        "path.rule_id": [rule.rule_id],
        "path.artifact_id": [artifact.artifact_id],
        "query.agent_id": AGENTS,
    }


async def _waiting(synapse: SynapseClient, key: str, sql: str = DELETE) -> LiveSession:
    """Send `sql` to `key`'s agent and wait until it waits for a person."""
    await synapse.send(key, sql)
    return await assert_eventually(
        lambda: synapse.session(key),
        lambda session: bool(session.pending_interactions),
        what=f"an approval in {key}",
    )


def config(known: Known, base: Path, into: Path) -> Path:
    """Write a schemathesis configuration to `into`: `base`'s settings, and each known list as a
    dictionary bound (with `PROBABILITY`) to its parameter."""
    lines = [base.read_text(), ""]
    names = {binding: f"known_{n}" for n, binding in enumerate(known)}
    for binding, values in known.items():
        lines += [f"[dictionaries.{names[binding]}]", f"values = {json.dumps(sorted(set(values)))}", ""]
    lines.append("[parameters]")
    for binding, name in names.items():
        lines.append(f'"{binding}" = {{ dictionary = "{name}", probability = {PROBABILITY} }}')
    into.write_text("\n".join(lines) + "\n")
    return into
