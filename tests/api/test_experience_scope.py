"""`GET /experience` with project-scoped keys: a key that names projects recalls only turns of
sessions in those projects; a key without projects recalls every turn.

Keys naming projects are set on the app directly (`ApiKeys` of `Caller`s with `projects`), the
way `SYNAPSE_API_KEYS` entries that name projects are read."""

from __future__ import annotations

import uuid

from temporalio.client import Client

from api.main import create_app
from core.security import ApiKeys, Caller, Role, digest_of
from core.settings import Settings

from ..conftest import assert_eventually
from ..support import serve
from .test_auth import bearer
from .test_sessions import new_key

ADMIN, SHOP, BOTH = "k-admin", "k-shop", "k-both"
CALLERS = {
    ADMIN: Caller("boss", Role.admin),
    SHOP: Caller("shopper", Role.viewer, frozenset({"shop"})),
    BOTH: Caller("auditor", Role.viewer, frozenset({"shop", "billing"})),
}


async def test_a_key_naming_projects_recalls_only_turns_of_its_projects(
    client: Client, settings: Settings, worker: None
) -> None:
    app = create_app(settings, client=client)
    app.state.api_keys = ApiKeys({digest_of(key): caller for key, caller in CALLERS.items()})
    word = f"refund{uuid.uuid4().hex}"
    async with serve(app) as http:

        async def projects(key: str, top_k: int = 10) -> list[str | None]:
            found = await http.get("/experience", params={"query": word, "top_k": top_k}, headers=bearer(key))
            assert found.status_code == 200, found.text
            return [match["project"] for match in found.json()]

        async def indexed(count: int) -> None:
            await assert_eventually(
                lambda: projects(ADMIN), lambda found: len(found) == count, within=60, what=f"{count} indexed"
            )

        for count, project in enumerate(("shop", "billing", None), start=1):
            key = new_key()
            started = await http.post(
                "/sessions", json={"session_key": key, "project": project}, headers=bearer(ADMIN)
            )
            assert started.status_code == 201, started.text
            sent = await http.post(
                f"/sessions/{key}/messages", json={"content": f"{word} for {project}"}, headers=bearer(ADMIN)
            )
            assert sent.status_code == 202, sent.text
            await indexed(count)  # one at a time: shop's turn is the oldest

        assert set(await projects(ADMIN)) == {"shop", "billing", None}
        assert await projects(SHOP, top_k=1) == ["shop"], (
            "narrowed before the limit: the newer turns of billing and of no project are not in the way"
        )
        both = await projects(BOTH)
        assert len(both) == 2 and set(both) == {"billing", "shop"}
