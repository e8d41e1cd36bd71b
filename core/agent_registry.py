"""Declared agents and groups (`Agent:<name>` / `Group:<name>` resolved to an AgentSpec), and
the MCP servers whose tools workers offer.

Declarations come from a TOML file: `SYNAPSE_AGENTS_FILE`, else `./synapse.toml`, else
`~/.synapse/agents.toml` (the first that exists and is not empty: an empty one declares nothing, and
the terminal's sandbox leaves an empty read-only `./synapse.toml` where none was, so that no
sandboxed command can create one), on top of the builtin offline agents:

```toml
[agents.analyst]
framework = "langgraph"            # adk | langgraph | autogen | demo
model = "gpt-4o-mini"
base_url = "http://127.0.0.1:11434/v1"   # any OpenAI-compatible endpoint
api_key_env = "OPENAI_API_KEY"     # the env var holding its key
instruction = "You are a careful data analyst."
tools = ["sql"]
fallback_models = ["gpt-4o"]
[agents.analyst.context]
conversation_history_config = { last_n = 20 }

[groups.analysts]
members = ["analyst", "demo"]
selection = "hash"                 # first | hash (stable by session key)

[mcp_servers.notes]                # MCP servers whose tools the workers offer (`mcp__notes__<tool>`)
command = "python"                 # stdio: started on each worker; or url = "https://..." (streamable HTTP)
args = ["notes_server.py"]
trust = false                      # true: its calls run without asking
exclude_tools = ["delete_all"]
```

The API resolves the assignee when work is submitted (an unknown one is a 422 then, never a
failed workflow later). A graph's tasks get the resolved spec by value; a session gets it by
reference (`agent_ref`: the name and a digest of the declaration, with what the workflow decides
with), and the worker that runs a step finds the declaration in its own registry (`declared`),
refusing one that changed since the session started.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from contracts import AgentGroup, AgentRef, AgentSpec, McpServerSpec

from .settings import Settings

M = TypeVar("M", AgentSpec, AgentGroup, McpServerSpec)

DEMO_TOOLS = ["sql", "terminal"]
"""What the demo agents may call: SQL, and shell commands written as `!command`."""

BUILTIN_AGENTS = {
    # The offline demo rules, plain, as a google-adk model in an ADK agent, as a LangChain chat
    # model in a LangGraph graph, and as the model client of an AutoGen AssistantAgent (defined
    # here only; the adapters use these).
    "demo": AgentSpec(name="demo", framework="demo", model="demo", tools=DEMO_TOOLS),
    "demo-adk": AgentSpec(name="demo-adk", framework="adk", model="demo", tools=DEMO_TOOLS),
    "demo-langgraph": AgentSpec(name="demo-langgraph", framework="langgraph", model="demo", tools=DEMO_TOOLS),
    "demo-autogen": AgentSpec(name="demo-autogen", framework="autogen", model="demo", tools=DEMO_TOOLS),
}


DEFAULT_AGENT = "Agent:demo"
"""The agent of sessions started without one (e.g. by their first chat message)."""


class UnknownAssignee(ValueError):
    """The assignee names no declared agent or group; the message lists the declared ones."""


class RegistryError(ValueError):
    """The agents file is unreadable or invalid; the message names the file and the field."""


@dataclass
class AgentRegistry:
    """Every declared agent and group."""

    agents: dict[str, AgentSpec] = field(default_factory=lambda: dict(BUILTIN_AGENTS))
    groups: dict[str, AgentGroup] = field(default_factory=dict)
    mcp_servers: dict[str, McpServerSpec] = field(default_factory=dict)
    source: Path | None = None

    def known(self) -> list[str]:
        """Every assignee id that resolves."""
        return [f"Agent:{name}" for name in self.agents] + [f"Group:{name}" for name in self.groups]

    def resolve(self, assignee_id: str, session_key: str = "") -> AgentSpec:
        """The agent an assignee stands for; a group picks a member by its selection rule."""
        kind, _, name = assignee_id.partition(":")
        if kind == "Agent" and name in self.agents:
            return self.agents[name]
        if kind == "Group" and name in self.groups:
            group = self.groups[name]
            index = 0
            if group.selection == "hash":
                index = int(hashlib.sha256(session_key.encode()).hexdigest(), 16) % len(group.members)
            return self.agents[group.members[index]]
        raise UnknownAssignee(
            f"assignee {assignee_id!r} is not declared; declared: {', '.join(self.known())}"
        )


def digest(spec: AgentSpec) -> str:
    """A short hash of the whole declaration: any change to it (an instruction, a tool, a model)
    gives another."""
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:16]


def agent_ref(spec: AgentSpec) -> AgentRef:
    """`spec` by reference, with what a workflow decides with (see `AgentRef`)."""
    history = spec.context.conversation_history_config or {}
    last_n = history.get("last_n")
    return AgentRef(
        name=spec.name,
        digest=digest(spec),
        framework=spec.framework,
        policies=spec.policies,
        sandbox=spec.sandbox,
        last_n=last_n if isinstance(last_n, int) and last_n > 0 else None,
    )


def declared(registry: AgentRegistry, ref: AgentRef, agent_id: str) -> AgentSpec:
    """The declaration `ref` refers to, from `registry`.

    Raises:
        UnknownAssignee: The registry has no agent of that name, or its declaration is not the
            one the reference was made from (changed since); the message says which and what to do.
    """
    spec = registry.agents.get(ref.name)
    if spec is None:
        raise UnknownAssignee(
            f"agent {ref.name!r} ({agent_id}) is not declared on this worker "
            f"({registry.source or 'builtin agents only'}); declared: {', '.join(registry.known())}"
        )
    found = digest(spec)
    if found != ref.digest:
        raise UnknownAssignee(
            f"agent {ref.name!r} ({agent_id}) was declared otherwise when this work started (digest "
            f"{ref.digest}) than on this worker now (digest {found}, {registry.source or 'builtin'}); "
            "a session keeps the declaration it started with: start a new session to use the new one"
        )
    return spec


def agents_file(settings: Settings) -> Path | None:
    """The declarations file in use, if any."""
    if settings.agents_file is not None:
        return settings.agents_file
    for candidate in (Path("synapse.toml"), Path.home() / ".synapse" / "agents.toml"):
        if candidate.is_file() and candidate.stat().st_size > 0:
            return candidate
    return None


def load_registry(settings: Settings) -> AgentRegistry:
    """Builtin agents plus the declarations file.

    Raises:
        RegistryError: The file is missing (when named explicitly), not TOML, or declares an
            invalid agent or group; the message names the file and the entry.
    """
    path = agents_file(settings)
    registry = AgentRegistry(source=path)
    if path is None:
        return registry
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise RegistryError(f"cannot read agents file {path}: {err}") from err
    for name, body in data.get("agents", {}).items():
        registry.agents[name] = _parse(path, f"agents.{name}", AgentSpec, {"name": name, **body})
    for name, body in data.get("groups", {}).items():
        group = _parse(path, f"groups.{name}", AgentGroup, {"name": name, **body})
        missing = [m for m in group.members if m not in registry.agents]
        if missing:
            raise RegistryError(f"{path}: groups.{name} names undeclared agents: {', '.join(missing)}")
        registry.groups[name] = group
    for name, body in data.get("mcp_servers", {}).items():
        server = _parse(path, f"mcp_servers.{name}", McpServerSpec, {"name": name, **body})
        if (server.command is None) == (server.url is None):
            raise RegistryError(
                f"{path}: mcp_servers.{name}: give `command` (a stdio server the worker starts) or `url` "
                "(a streamable HTTP server), not both or neither"
            )
        registry.mcp_servers[name] = server
    return registry


def _parse(path: Path, where: str, model: type[M], body: dict[str, object]) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as err:
        problems = "; ".join(
            f"{where}.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        raise RegistryError(f"{path}: {problems}") from err
