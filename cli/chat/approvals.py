"""Requests for a person, answered inline: the REPL shows each one (the tool and its arguments)
and rings the bell, then waits for a key.

- `y` approve once; `s` allow for this session (a `session_prefix` grant when the request offers
  one, else `session`); `a` allow always in this project: where and what it allows is said in
  words, the proposed rule's one line edited, saved with `POST /rules` (scope project: the REPL's
  project, else for its person, else it is this session only and approves with a grant, as `s`;
  never global) once this call's approval was taken; `e` edit the
  arguments, then approve; `n` deny with a reason; `l` later: leave it pending for another
  channel (`/approve`, `/deny` still reach it).
- A question is answered with a line of text; a gated graph task with `y`, `n` or `l`.

A decision made elsewhere while the prompt is open closes it (`decided`); the stream's decision
line says who decided. Decisions are sent in the background, since the API answers an approval
once the tool ran: the prompt is back at once, and a refused decision is shown and asked again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

from prompt_toolkit.lexers import Lexer, PygmentsLexer
from rich.text import Text

from activities.rules import offers
from contracts import InteractionOutcome, NewRule
from core.client import SynapseClient, SynapseError
from workflows.supervision.decisions import taken

from .prompts import Closed, Prompts
from .render import LEXERS, Renderer
from .state import ChatState, Request

TOOL_KEYS = "[y] approve once  [s] allow for this session  [a] allow always in this project  [e] edit  [n] deny  [l] later"
GATE_KEYS = "[y] approve  [n] deny  [l] later"


class Approvals:
    """The requests waiting for this REPL's person, asked one at a time."""

    def __init__(
        self,
        client: SynapseClient,
        state: ChatState,
        renderer: Renderer,
        prompts: Prompts,
    ) -> None:
        self.client, self.state, self.renderer, self.prompts = client, state, renderer, prompts
        self.alert: Callable[[], None] = lambda: None
        """Rings the bell and brings the REPL's attention to the queue (the REPL sets it)."""
        self._queue: list[str] = []
        self.later: set[str] = set()
        self._sent: set[str] = set()
        self.asking: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.unstreamed: set[str] = set()
        """Requests no followed stream reports the decisions of (a `/graph run` graph's): the REPL
        says itself what its person decided, from the API's answer."""

    def arrived(self, request: Request) -> None:
        """A request opened: queue it to be asked (once)."""
        known = request.interaction_id in (*self._queue, *self.later, *self._sent, self.asking)
        if not known:
            self._queue.append(request.interaction_id)
            self.alert()

    def decided(self, interaction_id: str, by: str = "someone else") -> None:
        """A request was decided (here or elsewhere, `by` whom): forget it, and close its prompt if open."""
        self._queue = [i for i in self._queue if i != interaction_id]
        self.later.discard(interaction_id)
        self._sent.discard(interaction_id)
        if self.asking == interaction_id and self.prompts.close():
            self.renderer.note(f"  (the prompt for {interaction_id} closed: {by} decided it)", "yellow")

    def forget(self) -> None:
        """Another session is followed now: nothing of this one is asked."""
        self._queue.clear()
        self.later.clear()
        self._sent.clear()

    def next(self) -> Request | None:
        """The next request to ask, if any."""
        while self._queue:
            request = self.state.pending.get(self._queue.pop(0))
            if request is not None:
                return request
        return None

    def again(self, request: Request) -> None:
        """Ask this request first, next time."""
        self._queue.insert(0, request.interaction_id)

    async def ask(self, request: Request) -> None:
        """Show the request and act on the person's key (see the module docstring).

        Raises:
            Interrupted: Ctrl-C (the request is asked again later); `Quit`: Ctrl-D (it stays pending).
        """
        self.asking = request.interaction_id
        try:
            self.renderer.request(request)
            if request.kind == "user_input":
                await self._answer_question(request)
            else:
                await self._approve(request)
        except Closed:
            pass
        finally:
            self.asking = None

    def decide(self, request: Request, approved: bool, **fields: Any) -> None:
        """Send a decision in the background (the stream shows it once it is taken)."""
        self._background(request, self._send(request, approved, fields))

    def _background(self, request: Request, sending: Coroutine[Any, Any, Any]) -> None:
        self._sent.add(request.interaction_id)
        task = asyncio.ensure_future(sending)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ the keys

    async def _approve(self, request: Request) -> None:
        gate = request.kind != "tool_approval"
        key = await self.prompts.key(f"{GATE_KEYS if gate else TOOL_KEYS} › ", "ynl" if gate else "ysaenl")
        if key == "y":
            self.decide(request, True)
        elif key == "s":
            offered = request.grants
            if not offered:
                self.renderer.note(
                    "  this tool allows no grants: approve once (y) or allow always (a)", "yellow"
                )
                return self.again(request)
            self.decide(
                request,
                True,
                response_data={"grant": "session_prefix" if "session_prefix" in offered else "session"},
            )
        elif key == "a":
            await self._allow_always(request)
        elif key == "e":
            await self._edit(request)
        elif key == "n":
            reason = (await self.prompts.line("reason for the agent (Enter: none) › ")).strip()
            self.decide(request, False, **({"user_message": reason} if reason else {}))
        else:
            self.later.add(request.interaction_id)
            self.renderer.note(
                f"  {request.interaction_id} left pending: /approve {request.interaction_id} or "
                f"/deny {request.interaction_id} later, or answer it from another channel"
            )

    async def _answer_question(self, request: Request) -> None:
        text = (await self.prompts.line("answer (Enter: later) › ")).strip()
        if not text:
            self.later.add(request.interaction_id)
            self.renderer.note(f"  {request.interaction_id} left unanswered; /pending lists it")
            return
        self.decide(request, True, response_data={"text": text})

    async def _allow_always(self, request: Request) -> None:
        try:
            offer = offers.offer(request.tool, request.params)
        except ValueError as err:
            self.renderer.error(f"no rule to offer: {err}")
            return self.again(request)
        where = offers.narrowest(self.state.project or None, self.state.principal or None)
        self.renderer.note(Text(f"  {offers.wording(offer, where)}", "yellow"))
        if where.scope is None:  # no project, no person: this session only is a grant, not a rule
            grant = offers.session_grant(request.grants)
            return self.decide(request, True, response_data={"grant": grant})
        line = await self.prompts.line(
            f"{offer.label} (edit, then Enter) › ", default=offer.line, selected=True
        )
        try:
            rule = offers.rule(
                request.tool, offers.edited(offer, line), self.state.principal, "synapse chat", where
            )
        except ValueError as err:
            self.renderer.error(f"the rule was not saved: {err}")
            return self.again(request)
        self._background(request, self._approve_then_save(request, rule))

    async def _approve_then_save(self, request: Request, rule: NewRule) -> None:
        """The rule is saved only once this call's approval was taken: a refused approval saves nothing."""
        if not await self._send(request, True, {}):
            return
        try:
            saved = await self.client.add_rule(rule)
        except SynapseError as err:
            self.renderer.error(f"approved once; the rule was not saved: {err.detail}")
            return
        from core.rules.match import describe

        self.renderer.note(Text(f"  saved {saved.rule_id}: {describe(saved)}", "green"))

    async def _edit(self, request: Request) -> None:
        argument, lexer = LEXERS.get(request.tool, ("", ""))
        value = request.params.get(argument)
        if isinstance(value, str):
            edited = await self.prompts.line(
                f"{argument} › ", default=value, lexer=_lexer(lexer), selected=True
            )
            arguments = {**request.params, argument: edited.strip()}
        else:
            text = await self.prompts.line(
                "arguments (JSON) › ", default=json.dumps(request.params, ensure_ascii=False), selected=True
            )
            try:
                arguments = json.loads(text)
            except ValueError as err:
                self.renderer.error(f"not JSON: {err}")
                return self.again(request)
        if arguments == request.params:
            self.renderer.note("  nothing changed; approving as it is")
            return self.decide(request, True)
        self.decide(request, True, response_data={"arguments": arguments})

    async def _send(self, request: Request, approved: bool, fields: dict[str, Any]) -> bool:
        """Send a decision; whether it was taken (an error is shown and the request asked again)."""
        principal = self.state.principal
        try:
            if request.graph_id is not None:
                outcome = await self.client.decide_graph(
                    request.graph_id, request.interaction_id, approved=approved, principal=principal, **fields
                )
                if request.interaction_id in self.unstreamed:
                    self._report(request, outcome)
            else:
                await self.client.decide(
                    self.state.key, request.interaction_id, approved=approved, principal=principal, **fields
                )
            return True
        except SynapseError as err:
            self._sent.discard(request.interaction_id)
            self.renderer.error(f"{request.interaction_id}: {err.detail}")
            if err.status in (400, 413, 422) and request.interaction_id in self.state.pending:
                self.again(request)  # a bad edit: ask again
                self.alert()
        except Exception as err:  # the API went away: the request still waits, ask again
            self._sent.discard(request.interaction_id)
            self.renderer.error(
                f"{request.interaction_id}: the decision was not sent ({err}); it still waits"
            )
            self.later.add(request.interaction_id)
        return False

    def _report(self, request: Request, outcome: InteractionOutcome | None) -> None:
        """What this REPL's person decided, where no stream will say it."""
        self.unstreamed.discard(request.interaction_id)
        if outcome is None:
            self.renderer.note(f"  {request.interaction_id}: the decision was sent; it is being applied")
            return
        if not outcome.complete:
            self.renderer.note(
                f"  {request.interaction_id}: your approval counted; another approver must approve too"
            )
            return
        self.renderer.event_line(taken(outcome))


def _lexer(name: str) -> Lexer | None:
    if not name:
        return None
    from pygments.lexers import get_lexer_by_name

    return PygmentsLexer(type(get_lexer_by_name(name)))
