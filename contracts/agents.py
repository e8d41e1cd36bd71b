"""Agent declarations: which framework and model an `Agent:<name>` runs, with which tools."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import CompactContract, Contract
from .policy import DecisionPolicy
from .sandbox import SandboxProfile

Framework = Literal["adk", "langgraph", "autogen", "demo"]


class AgentContextConfig(Contract):
    """Which context the agent is given: ContextBuildConfig without the per-task `task_id`."""

    include_metadata: bool = Field(default=True, description="Include task metadata.")
    include_tool_list: bool = Field(default=True, description="Declare the agent's tools to the model.")
    conversation_history_config: dict[str, Any] | None = Field(
        default=None, description='Which conversation to include, e.g. `{"last_n": 10}` (all when unset).'
    )
    task_list_config: dict[str, Any] | None = Field(
        default=None, description='Which graph tasks to include, e.g. `{"status_in": ["COMPLETED"]}`.'
    )
    artifact_config: dict[str, Any] | None = Field(
        default=None,
        description='An artifact to include, e.g. `{"asset_id": "art_...", "mode": "SUMMARY"}` '
        "(FULL: whole; SUMMARY: a bounded head and tail with sizes).",
    )
    experience_config: dict[str, Any] | None = Field(
        default=None,
        description='Past experience to recall, e.g. `{"query": "refund", "top_k": 3}` (the query '
        "defaults to the newest message).",
    )


class AgentSpec(Contract):
    """One declared agent (settings file `[agents.<name>]`)."""

    name: str = Field(description="The agent's name; `Agent:<name>` refers to it.")
    framework: Framework = Field(
        default="demo", description="adk, langgraph, autogen, or demo (offline rules)."
    )
    model: str | None = Field(
        default=None,
        description="Model name: `demo` (offline rules), a Gemini model (ADK, GOOGLE_API_KEY), or any "
        "model of the OpenAI-compatible endpoint at `base_url`.",
    )
    instruction: str = Field(default="", description="System instruction for the model.")
    tools: list[str] = Field(default_factory=lambda: ["sql"], description="Tools it may call.")
    policies: dict[str, DecisionPolicy] = Field(
        default_factory=dict,
        description="Decision policies by tool name or `*` (a session's own policies win over these).",
    )
    fallback_models: list[str] = Field(
        default_factory=list, description="Models tried in order when the model fails."
    )
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1`."
    )
    api_key_env: str | None = Field(
        default=None,
        description="Name of the env var holding the endpoint's key (the key itself never enters history).",
    )
    context: AgentContextConfig = Field(
        default_factory=AgentContextConfig, description="Which context the agent is given."
    )
    sandbox: SandboxProfile | None = Field(
        default=None,
        description="The sandbox its approved terminal commands run in (`workspace-write`, `read-only`, "
        "`full`); a session's choice wins; None: the worker's SYNAPSE_TERMINAL_SANDBOX.",
    )


class AgentRef(CompactContract):
    """An agent's declaration by reference: what a session carries instead of the whole
    `AgentSpec` (its instruction, model, endpoint and tools stay in the workers' registry).

    The worker that runs a step finds the declaration by `name` and checks it against `digest`:
    a declaration changed since the session started, or one the worker does not have, fails the
    step with a clear error (`UnknownAgent`), never a step run with other instructions. What the
    workflow itself decides with (whether a step is quick, whose approval a call needs, the
    sandbox, how much conversation the agent is shown) travels with the reference."""

    name: str = Field(description="The agent's name in the registry (`Agent:<name>`; a group's member).")
    digest: str = Field(description="Hash of the whole declaration as it was when the session started.")
    framework: Framework = Field(default="demo", description="The declaration's framework.")
    policies: dict[str, DecisionPolicy] = Field(
        default_factory=dict, description="The declaration's decision policies by tool name or `*`."
    )
    sandbox: SandboxProfile | None = Field(default=None, description="The declaration's sandbox.")
    last_n: int | None = Field(
        default=None,
        description="The declaration's `context.conversation_history_config.last_n`: the agent is "
        "shown the last this many messages (None: all).",
    )


class AgentGroup(Contract):
    """A named list of agents; `Group:<name>` picks one per session (see `selection`)."""

    name: str = Field(description="The group's name.")
    members: list[str] = Field(min_length=1, description="Agent names, in order of preference.")
    selection: Literal["first", "hash"] = Field(
        default="first",
        description="`first`: always the first member; `hash`: a stable pick by session key, "
        "spreading sessions over the members.",
    )


class AgentLookup(Contract):
    """Input of the `resolve_agents` activity: assignees a graph needs declarations for."""

    assignee_ids: list[str] = Field(description="`Agent:<name>` or `Group:<name>` values.")
    key: str = Field(default="", description="Key a `hash` group picks its member by (the graph id).")


class AgentLookupResult(Contract):
    """The declarations found, and why the others could not be."""

    agents: dict[str, AgentSpec] = Field(default_factory=dict, description="Assignee → declaration.")
    unknown: dict[str, str] = Field(default_factory=dict, description="Assignee → why it is unknown.")
