"""The Temporal Web UI in a real browser, with payloads encrypted: an operator still reads them.

The dev server runs its Web UI with `--ui-codec-endpoint` pointing at the API's codec server, as
`synapse up` starts it when `SYNAPSE_CODEC_KEYS` is set (`cli/up.py`); the worker and the API
encrypt every payload. Headless Chromium opens the UI's workflow list filtered by
`SynapseStatus="waiting_approval"` and the session's page, and reads the pending approval there:
the page asked the codec server to decrypt it (the database holds ciphertext; see
tests/faults/test_encrypted_at_rest.py), under the *User Metadata* tab, its facts a bulleted list.
"""

from __future__ import annotations

import base64
import os
import re
import uuid
from pathlib import Path
from urllib.parse import quote

import httpx
from playwright.async_api import Browser, expect

from api.main import create_app
from cli.up import codec_flags
from core.connect import synapse_converter
from core.settings import ApiSettings, Settings, TemporalSettings
from tests.support import asked, dev_server, free_ports, running
from worker import build_worker
from workflows.identity.ids import session_workflow_id

from ..test_sessions import DELETE_CANCELLED, ask_for_delete, new_key
from .conftest import shot

WAITING = 'SynapseStatus="waiting_approval"'
"""The list filter an operator types: sessions and graphs waiting for a person."""


async def test_the_web_ui_lists_the_waiting_session_and_shows_its_approval_decrypted(
    browser: Browser, tmp_path: Path
) -> None:
    api_port, ui_port = free_ports(2)
    settings = Settings(
        data_dir=tmp_path,
        temporal=TemporalSettings(
            task_queue=f"tq-{uuid.uuid4().hex[:12]}",
            ui_port=ui_port,
            codec_keys=f"k1:{base64.b64encode(os.urandom(32)).decode()}",
        ),
        api=ApiSettings(port=api_port),
        _env_file=None,
    )
    async with (
        dev_server(synapse_converter(settings), ui_port=ui_port, args=codec_flags(settings)) as env,
        build_worker(env.client, settings),
        running(create_app(settings, client=env.client), port=api_port) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=30) as http,
    ):
        key = new_key()
        request = await ask_for_delete(http, key)
        workflow_id = session_workflow_id(key)
        ui = f"http://127.0.0.1:{ui_port}/namespaces/{env.client.namespace}/workflows"
        page = await browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(30_000)

        await page.goto(f"{ui}?query={quote(WAITING)}")
        session_link = page.get_by_role("link", name=workflow_id)
        await expect(session_link).to_be_visible()
        await expect(page.get_by_text("1 Workflow", exact=True)).to_be_visible()
        await shot(page, "temporal-ui-waiting-approval")

        await session_link.click()
        await expect(page).to_have_url(re.compile(re.escape(quote(workflow_id, safe=""))))
        await expect(page.get_by_text('"session_key": "' + key + '"')).to_be_visible()  # the input
        await page.get_by_text("User Metadata", exact=True).click()  # the current details
        details = page.frame_locator("iframe#user-metadata-current-details")  # rendered markdown
        await expect(details.get_by_text("Waiting for approval")).to_be_visible()
        await expect(details.get_by_text(asked(request).interaction_id, exact=True)).to_be_visible()
        await expect(details.get_by_text(f"sql: {DELETE_CANCELLED}")).to_be_visible()
        # the request's facts are a list with bullets, not lines of text that start with dashes
        await expect(details.get_by_role("listitem").filter(has_text="may approve: anyone")).to_be_visible()
        await expect(details.get_by_text("- may approve")).to_have_count(0)
        await shot(page, "temporal-ui-session-decrypted")

        metrics = (await http.get("/metrics")).text
        decoded = re.search(r'synapse_http_requests_total\{[^}]*route="/codec/decode"[^}]*\} (\S+)', metrics)
        assert decoded and float(decoded.group(1)) >= 1, "the page asked the codec server to decrypt"
