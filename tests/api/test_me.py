"""`GET /me`: who the caller's key makes them, so a client shows only what they may do."""

from __future__ import annotations

import httpx
from temporalio.client import Client

from api.main import create_app
from core.settings import ApiSettings, Settings

from ..support import serve


async def test_open_api_says_admin_and_no_principal(http: httpx.AsyncClient) -> None:
    answer = await http.get("/me")

    assert answer.status_code == 200, answer.text
    assert answer.json() == {"principal": None, "role": "admin", "keys_required": False, "projects": None}


async def test_a_key_names_its_principal_role_and_projects_and_none_is_401(
    client: Client, settings: Settings
) -> None:
    keyed = settings.model_copy(
        update={"api": ApiSettings(keys="k1:alice:approver,k2:vic:viewer:projects=shop,billing")}
    )
    async with serve(create_app(keyed, client=client)) as http:
        viewer = await http.get("/me", headers={"Authorization": "Bearer k2"})
        approver = await http.get("/me", headers={"Authorization": "Bearer k1"})
        nobody = await http.get("/me")

    assert viewer.json() == {
        "principal": "vic",
        "role": "viewer",
        "keys_required": True,
        "projects": ["billing", "shop"],
    }
    assert approver.json() == {
        "principal": "alice",
        "role": "approver",
        "keys_required": True,
        "projects": None,
    }
    assert nobody.status_code == 401
