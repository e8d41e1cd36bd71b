"""The rules a call is assessed against: the saved ones (`core.rules.store`) that apply to its
session, and its profile's. Read at every assessment, so a rule saved now decides the next call.

A store that cannot be read decides nothing by itself: the call is asked for (`unreadable`), so a
deny rule can never be skipped silently, and nothing runs that a person did not allow.
"""

from __future__ import annotations

import logging

from contracts import RuleContext, RuleDecision, RuleVerdict
from core.rules.match import CallFacts, verdict
from core.rules.profiles import profile_named
from core.rules.store import RuleStore

logger = logging.getLogger(__name__)


class RulesUnreadable(RuntimeError):
    """The rules store did not answer; the call must be asked for."""


class RuleBook:
    """Decides calls by the rules (blocking: call it from a thread)."""

    def __init__(self, store: RuleStore) -> None:
        self.store = store

    def decide(self, facts: CallFacts, context: RuleContext, *, critical: bool) -> RuleVerdict | None:
        """The rule that decides the call, if any. An `allow` never decides a critical tool's call
        (its two people are still asked); `RulesUnreadable` when the store cannot be read."""
        try:
            saved = self.store.for_call(facts.tool_id, context)
        except Exception as err:  # a database that is down or misconfigured
            logger.warning("approval rules at %s could not be read: %s", self.store.url, err)
            raise RulesUnreadable(f"the approval rules could not be read ({type(err).__name__})") from err
        try:
            profile = profile_named(context.profile).rules
        except KeyError:
            profile = ()
        found = verdict([*profile, *saved], facts, context)
        if found is not None and found.decision == RuleDecision.ALLOW and critical:
            return None
        return found
