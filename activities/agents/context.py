"""Context sources read at step time: artifacts and past experience, as system messages.

The workflow sends the conversation; what lives outside it is fetched here, in the activity
(a workflow does no I/O):

- `artifact_config` `{"asset_id": "art_...", "mode": "FULL" | "SUMMARY"}` of the agent's
  declaration puts that artifact in front of the conversation: whole (FULL, up to
  `FULL_MAX_CHARS`) or as a bounded head and tail with its sizes (SUMMARY, the default).
- artifacts attached to a user message (`metadata.artifacts`) are summarised just before it.
- `experience_config` `{"query": "...", "top_k": 3}` recalls the best matching finished turns
  (the newest user message is the query when none is given) and lists them first: of the
  session's project only (a graph task's: of no project).

A source that cannot be read (an unknown artifact) becomes a note in its place, never a failure.
"""

from __future__ import annotations

import asyncio
from typing import Any

from contracts import AgentStepInput, ExperienceMatch, UniversalMessage
from core.artifacts import ArtifactNotFound, ArtifactStore, summarize
from core.experience import ExperienceIndex
from core.times import utc_text

SUMMARY_CHARS = 4000
"""Characters of an artifact in SUMMARY mode (head and tail)."""
FULL_MAX_CHARS = 200_000
"""FULL mode still stops here: a model's context is finite too."""
DEFAULT_TOP_K = 3
MAX_TOP_K = 20


def _system(text: str, source: str) -> UniversalMessage:
    return UniversalMessage(role="system", content=text, metadata={"context_source": source})


def _latest_user_text(messages: list[UniversalMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user" and isinstance(message.content, str):
            return message.content
    return ""


def describe_matches(matches: list[ExperienceMatch]) -> str:
    """Recalled turns as a numbered list the model reads."""
    lines = ["Relevant past experience (finished turns, best match first):"]
    for number, match in enumerate(matches, 1):
        when = utc_text(match.at, seconds=False)
        lines.append(
            f"{number}. {when}, {match.asked_by} asked {match.agent_id} ({match.outcome}):\n"
            f"   Q: {match.question}\n   A: {match.answer}"
        )
    return "\n".join(lines)


class ContextSources:
    """Reads artifacts and experience for `agent_step`."""

    def __init__(self, store: ArtifactStore, index: ExperienceIndex) -> None:
        self.store = store
        self.index = index

    async def artifact(self, artifact_id: Any, mode: Any = "SUMMARY") -> UniversalMessage:
        """One artifact as a system message: whole (FULL) or summarised (SUMMARY)."""
        if not isinstance(artifact_id, str):
            return _system(
                f"(artifact_config.asset_id must be an artifact id, got {artifact_id!r})", "artifact"
            )
        try:
            info, content = await asyncio.to_thread(self.store.get, artifact_id)
        except ArtifactNotFound:
            return _system(f"(artifact {artifact_id} was asked for but does not exist)", "artifact")
        limit = FULL_MAX_CHARS if mode == "FULL" else SUMMARY_CHARS
        return _system(summarize(info, content, max_chars=limit), "artifact")

    async def experience(self, config: dict[str, Any], step: AgentStepInput) -> UniversalMessage | None:
        """The best matching past turns, or None when nothing matches."""
        query = config.get("query") or _latest_user_text(step.messages)
        top_k = config.get("top_k", DEFAULT_TOP_K)
        top_k = min(top_k, MAX_TOP_K) if isinstance(top_k, int) and top_k > 0 else DEFAULT_TOP_K
        if not isinstance(query, str) or not query.strip():
            return None
        # An agent recalls its own project's turns only: a session's (`remember.project`), and a
        # graph task's those of no project, never another team's.
        project = step.remember.project if step.remember is not None else None
        matches = await asyncio.to_thread(self.index.search, query, top_k, projects=[project])
        return _system(describe_matches(matches), "experience") if matches else None

    async def enrich(self, step: AgentStepInput) -> AgentStepInput:
        """The step with its context sources added as system messages."""
        front: list[UniversalMessage] = []
        context = step.agent.context if step.agent else None
        if context and context.experience_config:
            recalled = await self.experience(context.experience_config, step)
            if recalled is not None:
                front.append(recalled)
        if context and context.artifact_config:
            config = context.artifact_config
            front.append(await self.artifact(config.get("asset_id"), config.get("mode", "SUMMARY")))
        messages: list[UniversalMessage] = []
        for message in step.messages:
            attached = message.metadata.get("artifacts") if message.role == "user" else None
            for artifact_id in attached if isinstance(attached, list) else []:
                messages.append(await self.artifact(artifact_id))
            messages.append(message)
        if not front and len(messages) == len(step.messages):
            return step
        return step.model_copy(update={"messages": front + messages})
