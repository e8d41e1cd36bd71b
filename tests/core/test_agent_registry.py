"""Declared agents and groups resolve at submission; mistakes are clear errors, not failed workflows."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent_registry import RegistryError, UnknownAssignee, agent_ref, declared, load_registry
from core.settings import Settings

DECLARATIONS = """
[agents.analyst]
framework = "langgraph"
model = "gpt-4o-mini"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "ANALYST_KEY"
tools = ["sql"]
fallback_models = ["gpt-4o"]
[agents.analyst.context]
conversation_history_config = { last_n = 4 }

[agents.writer]
framework = "adk"
model = "demo"

[groups.team]
members = ["analyst", "writer"]
selection = "hash"

[groups.lead]
members = ["writer", "analyst"]
"""


def registry_from(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "agents.toml"
    path.write_text(text)
    return Settings(agents_file=path, data_dir=tmp_path)


def test_agents_and_groups_resolve(tmp_path: Path) -> None:
    registry = load_registry(registry_from(tmp_path, DECLARATIONS))
    analyst = registry.resolve("Agent:analyst")
    assert (analyst.framework, analyst.model, analyst.fallback_models) == (
        "langgraph",
        "gpt-4o-mini",
        ["gpt-4o"],
    )
    assert analyst.context.conversation_history_config == {"last_n": 4}
    assert registry.resolve("Group:lead").name == "writer", "`first` picks the first member"
    picks = {registry.resolve("Group:team", f"session-{i}").name for i in range(20)}
    assert picks == {"analyst", "writer"}, "`hash` spreads sessions over the members"
    assert registry.resolve("Group:team", "same").name == registry.resolve("Group:team", "same").name
    assert registry.resolve("Agent:demo-adk").framework == "adk", "builtin agents stay declared"


def test_a_reference_finds_its_declaration_and_refuses_one_changed_or_missing(tmp_path: Path) -> None:
    registry = load_registry(registry_from(tmp_path, DECLARATIONS))
    ref = agent_ref(registry.resolve("Group:lead"))
    assert (ref.name, ref.framework, ref.last_n) == ("writer", "adk", None)
    analyst = agent_ref(registry.resolve("Agent:analyst"))
    assert (analyst.framework, analyst.last_n) == ("langgraph", 4), "what the workflow decides with"
    assert "instruction" not in analyst.model_dump(), "the rest stays in the registry"
    assert declared(registry, ref, "Group:lead") == registry.agents["writer"]

    changed = load_registry(
        registry_from(tmp_path, DECLARATIONS.replace('model = "demo"', 'model = "other"'))
    )
    with pytest.raises(UnknownAssignee, match=r"'writer' \(Group:lead\) was declared otherwise.*new session"):
        declared(changed, ref, "Group:lead")
    missing = load_registry(
        registry_from(
            tmp_path,
            DECLARATIONS.replace("[agents.writer]", "[agents.author]").replace('"writer"', '"author"'),
        )
    )
    with pytest.raises(UnknownAssignee, match=r"'writer' \(Group:lead\) is not declared on this worker"):
        declared(missing, ref, "Group:lead")


def test_an_unknown_assignee_names_the_declared_ones(tmp_path: Path) -> None:
    registry = load_registry(registry_from(tmp_path, DECLARATIONS))
    with pytest.raises(
        UnknownAssignee, match=r"'Agent:ghost' is not declared; declared: Agent:demo, .*Group:team"
    ):
        registry.resolve("Agent:ghost")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[agents.bad]\nframework = "crewai"\n',
            r"agents\.bad\.framework: Input should be 'adk', 'langgraph', 'autogen' or 'demo'",
        ),
        ('[agents.bad]\nmodle = "x"\n', r"agents\.bad\.modle: Extra inputs are not permitted"),
        ('[groups.g]\nmembers = ["nobody"]\n', r"groups\.g names undeclared agents: nobody"),
        ("not toml = = =", r"cannot read agents file"),
    ],
)
def test_invalid_declarations_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        load_registry(registry_from(tmp_path, text))


def test_an_empty_synapse_toml_declares_nothing_and_the_home_file_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal's sandbox leaves an empty `./synapse.toml` where none was: it must not hide the
    declarations in `~/.synapse/agents.toml`."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".synapse").mkdir(parents=True)
    project.mkdir()
    (home / ".synapse" / "agents.toml").write_text(DECLARATIONS)
    (project / "synapse.toml").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    registry = load_registry(Settings(data_dir=tmp_path / "data", _env_file=None))
    assert registry.resolve("Agent:writer").framework == "adk"
