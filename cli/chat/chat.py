"""`Chat`: one REPL's hold on Synapse, below its screen: which session it follows, starting one
(with the project, the person and the profile), attaching to another, sending what is typed.

A new session is created with its first message, so a REPL opened and closed leaves nothing
behind. Attaching to a session follows its stream from where it stands and asks what already
waits for a person.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import httpx
from rich.console import Console
from rich.text import Text

from core.client import SynapseClient, SynapseError

from .approvals import Approvals
from .follower import Follower
from .prompts import Prompts
from .render import Renderer, inline_markdown
from .saved import SavedChats
from .settings import Effective
from .state import ChatState, Request

SHOWN_ON_ATTACH = 6
"""Messages of the conversation shown when attaching to a session."""
SESSIONS_LISTED = 30
"""Sessions `/sessions` lists and completion offers."""


class CommandError(Exception):
    """A command that cannot be done as asked; the message says why and what to do."""


def new_key() -> str:
    return f"chat-{uuid.uuid4().hex[:8]}"


class Chat:
    """The session a REPL follows, and what it does with it."""

    def __init__(
        self,
        client: SynapseClient,
        effective: Effective,
        *,
        project: Path,
        cwd: Path,
        console: Console,
        principal: str,
    ) -> None:
        settings = effective.settings
        self.client, self.effective, self.cwd, self.console = client, effective, cwd, console
        self.folder = project
        """The project folder the REPL runs in (its `.synapse/settings.toml`)."""
        self.state = ChatState(
            key=new_key(),
            agent=settings.agent,
            profile=settings.profile,
            project=settings.project or str(project),
            principal=principal,
        )
        self.key_projects: list[str] | None = None
        """The projects the API key is scoped to (`GET /me`, asked by `open`); None: every one."""
        self.renderer = Renderer(console, self.state)
        self.prompts = Prompts()
        self.approvals = Approvals(client, self.state, self.renderer, self.prompts)
        self.follower = Follower(
            client, self.state, self.renderer, arrived=self.approvals.arrived, decided=self.approvals.decided
        )
        self.saved = SavedChats()
        self.quitting = False
        self.background: set[asyncio.Future[None]] = set()
        """Work going on besides the stream (graphs being watched); cancelled at the end."""
        self.known: dict[str, list[str]] = {"sessions": [], "grants": [], "rules": []}
        """Values completion offers (refreshed by the commands that read them)."""

    async def open(self, key: str | None) -> None:
        """Begin: attach to `key` when it names a session, else a new one (started by its first
        message). An API that does not answer is said, and the footer says so until it does."""
        try:
            await self._fit_project()
        except httpx.HTTPError as err:
            self.renderer.error(
                f"the API at {self.client.http.base_url} could not be reached ({err or type(err).__name__}); "
                "start it with `make up` (or give --api URL)"
            )
            self.follower.await_api()
            if key is not None:
                self.state.key = key
            return
        if key is None:
            return
        try:
            await self.attach(key)
        except SynapseError as err:
            if err.status != 404:
                raise
            self.state.key = key
            self.renderer.note(f"session {key} does not exist yet: your first message starts it")

    async def _fit_project(self) -> None:
        """A key scoped to projects starts sessions only in them: its only project takes the place
        of this folder's; with several, the person is told to choose one (`project`)."""
        try:
            self.key_projects = (await self.client.me()).projects
        except SynapseError:
            return  # the first call that needs the key says what is wrong with it
        projects = self.key_projects
        if projects is None or self.state.project in projects:
            return
        if len(projects) == 1:
            self.state.project = projects[0]
            self.renderer.note(f"your key acts in project {projects[0]}: new sessions start there", "yellow")
            return
        self.renderer.note(
            f"your key acts in projects {', '.join(projects)}, not in {self.state.project}: set `project` "
            'to one of them (`project = "NAME"` in .synapse/settings.toml, or SYNAPSE_CHAT_PROJECT)',
            "yellow",
        )

    @property
    def upload_project(self) -> str | None:
        """The project an upload is for: the session's, when the key is scoped (else none)."""
        return self.state.project if self.key_projects is not None else None

    async def attach(self, key: str) -> None:
        """Follow session `key` from where its stream stands; what waits for a person is asked.

        Raises:
            SynapseError: The session cannot be read (404: there is none).
        """
        live = await self.client.session(key)
        self.approvals.forget()
        self.state.switch(key, live.agent_id, live.profile)
        if live.project and live.project != self.state.project:
            self.renderer.note(
                f"  its project is {live.project} (rules of that project apply to it)", "yellow"
            )
        for message in live.messages[-SHOWN_ON_ATTACH:]:
            if message.role in ("user", "assistant") and isinstance(message.content, str):
                who = message.name or (live.agent_id if message.role == "assistant" else "someone")
                first = message.content.splitlines()[0] if message.content else ""
                self.renderer.note(Text(f"  {who}: ", "dim").append_text(inline_markdown(first, "dim")))
        pending = len(live.pending_interactions)
        self.renderer.note(
            f"attached to session {key} ({live.status}, {live.agent_id}"
            + (f", {pending} waiting for a person" if pending else "")
            + ")",
            "bold",
        )
        self.follower.follow(after=live.next_offset - 1 if live.next_offset else None)
        for interaction in live.pending_interactions:
            request = Request.of_interaction(interaction)
            self.state.pending[request.interaction_id] = request
            self.approvals.arrived(request)

    def new_session(self, agent: str | None = None) -> None:
        """Leave this session; the next message starts a new one (with `agent`, if given)."""
        self.follower.stop()
        self.approvals.forget()
        self.state.switch(new_key(), agent)
        self.state.started = False
        self.state.connection = "idle"

    async def ensure_started(self) -> None:
        """Create the session if this REPL has not yet (an existing one of that key is attached)."""
        if self.state.started:
            return
        settings = self.effective.settings
        fields = {
            "agent_id": self.state.agent,
            "project": self.state.project,
            "user": self.state.principal,
            "profile": self.state.profile,
            "approval_timeout_seconds": settings.approval_timeout_seconds,
        }
        try:
            await self.client.create_session(
                self.state.key, **{k: v for k, v in fields.items() if v is not None}
            )
        except SynapseError as err:
            if err.status != 409:
                raise CommandError(f"the session could not be started: {err.detail}") from None
            return await self.attach(self.state.key)
        self.state.started = True
        self.follower.follow(after=None)

    async def send(self, text: str, artifacts: list[str] | None = None) -> None:
        """Send a message to the agent (the stream shows what it does)."""
        await self.ensure_started()
        key, principal = self.state.key, self.state.principal
        if artifacts:
            accepted = await self.client.send_attached(key, text, artifacts=artifacts, principal=principal)
        else:
            accepted = await self.client.send(key, text, principal=principal)
        self.state.turn, self.state.activity = True, "thinking"
        if accepted.restarted:
            self.renderer.note(
                f"  the session had ended ({accepted.note}); this message started it again", "yellow"
            )
            self.follower.follow(after=None)

    async def cancel_turn(self) -> None:
        """Cancel the running turn: what waits is denied, a running tool is stopped, the agent is told."""
        try:
            await self.client.cancel_turn(
                self.state.key, "cancelled in synapse chat (Ctrl-C)", self.state.principal
            )
        except SynapseError as err:
            if err.status != 409:
                raise
            self.renderer.note(f"  nothing to cancel: {err.detail}")
            self.state.turn, self.state.activity = False, None

    async def refresh_known(self, kind: str) -> None:
        """Read afresh what completion offers for `kind` (`sessions`, `grants`, `rules`)."""
        if kind == "sessions":
            self.known[kind] = [s.session_key for s in await self.client.sessions(limit=SESSIONS_LISTED)]
        elif kind == "grants" and self.state.started:
            listed = (await self.client.grants(self.state.key)).grants
            self.known[kind] = [g.grant_id for g in listed if g.revoked_at is None]
        elif kind == "rules":
            listed_rules = await self.client.rules(project=self.state.project, profile=self.state.profile)
            self.known[kind] = [r.rule_id for r in listed_rules if not r.rule_id.startswith("profile:")]

    async def close(self) -> None:
        for task in self.background:
            task.cancel()
        await self.follower.close()
