"""A session only tightens (`api/calls/floor.py`): what `POST /sessions` may set over its agent's and
the deployment's floor, by role; and, over random policies (hypothesis), whatever a non-admin is
allowed leaves every tool's effective policy at least as strict as the agent's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.calls.floor import floor_of, refusals, with_agents_defaults
from contracts import AgentSpec, CreateSessionRequest, DecisionPolicy, Role, SandboxProfile, policy_for
from core.security import OPEN_ACCESS, Caller

WW, RO, FULL = SandboxProfile.WORKSPACE_WRITE, SandboxProfile.READ_ONLY, SandboxProfile.FULL
WIDTH = [RO, WW, FULL]
OTTO = Caller("otto", Role.operator)
ANN = Caller("ann", Role.approver)
ADA = Caller("ada", Role.admin)
CAREFUL = AgentSpec(
    name="careful",
    policies={
        "sql": DecisionPolicy(
            approvers=["oscar", "pat", "ou_1"], approvals_required=2, escalate_to=["dave"], allow_grants=False
        ),
        "*": DecisionPolicy(approvals_required=2),
    },
)
"""sql: two of oscar, pat and ou_1, escalating to dave, no grants; every other tool: two of anyone."""
KEPT = {"approvals_required": 2, "allow_grants": False}
"""What a session's sql policy must say to keep CAREFUL's floor."""


def refused(
    caller: Caller, agent: AgentSpec = CAREFUL, profile_sandbox: SandboxProfile | None = None, **body: Any
) -> str:
    """The refusals of `body` by `caller` over `agent` on a workspace-write deployment, joined."""
    floor = floor_of(agent, WW)
    request = with_agents_defaults(CreateSessionRequest.model_validate(body), floor)
    return "; ".join(refusals(request, caller, floor, profile_sandbox))


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {"policies": {"sql": {**KEPT, "approvals_required": 1}}},
            "policies.sql.approvals_required 1 is below the agent's 2: a session may only raise it "
            "(an admin may lower it)",
        ),
        (
            {"policies": {"*": {"approvals_required": 1}}},
            "policies.*.approvals_required 1 is below the agent's 2",
        ),
        (
            {"policies": {"terminal": {"approvals_required": 1}}},
            "policies.terminal.approvals_required 1 is below the agent's 2",  # the agent's `*` covers it
        ),
        (
            {"policies": {"sql": {**KEPT, "approvers": ["oscar", "mallory"]}}},
            "policies.sql.approvers name mallory, not among the agent's oscar, pat, ou_1: a session may "
            "only name approvers among them (an admin may widen it)",
        ),
        (
            {"policies": {"sql": {**KEPT, "approvers": []}}},
            "policies.sql.approvers let anyone decide, wider than the agent's oscar, pat, ou_1",
        ),
        (
            {"policies": {"sql": KEPT}},
            "policies.sql.approvers (none: the session's approvers) let anyone decide, wider than",
        ),
        (
            {"approvers": ["eve"], "policies": {"sql": KEPT}},
            "policies.sql.approvers (none: the session's approvers) name eve, not among the agent's",
        ),
        (
            {"policies": {"sql": {**KEPT, "approvers": ["oscar"], "escalate_to": ["eve"]}}},
            "policies.sql.escalate_to names eve, not among who the agent's policy lets decide "
            "(oscar, pat, ou_1, dave): a session may only escalate to them (an admin may widen it)",
        ),
        (
            {"policies": {"sql": {"approvals_required": 2, "approvers": ["oscar"], "allow_grants": True}}},
            "policies.sql.allow_grants true where the agent's is false: a session may only turn grants off "
            "(an admin may turn them on)",
        ),
        (
            {"sandbox": "full"},
            "sandbox full is wider than the deployment's (SYNAPSE_TERMINAL_SANDBOX) workspace-write: a "
            "session may only narrow it (an admin may widen it)",
        ),
        (
            {"user": "alice"},
            "user 'alice' is not the caller 'otto': with API keys on a session is for its caller (an "
            "admin may name another person)",
        ),
    ],
)
def test_a_looser_session_is_refused_naming_the_rule_and_an_admin_may_start_it(
    body: dict[str, Any], said: str
) -> None:
    assert said in refused(OTTO, **body)
    assert refused(ANN, **body) == refused(OTTO, **body).replace("otto", "ann"), "nor may an approver"
    assert refused(ADA, **body) == ""
    assert refused(OPEN_ACCESS, **body) == "", "with keys off every caller is an admin"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"policies": {"sql": {**KEPT, "approvers": ["oscar", "pat"]}}},
        {"policies": {"sql": {**KEPT, "approvers": ["lark:ou_1"]}}},  # one person, two spellings
        {"approvers": ["pat"], "policies": {"sql": KEPT}},  # None: the session's approvers, among the agent's
        {"policies": {"sql": {**KEPT, "approvers": ["oscar"], "escalate_to": ["dave", "pat"]}}},
        {"policies": {"*": {"approvals_required": 2, "approvers": ["anyone-named"], "allow_grants": False}}},
        {
            "policies": {"terminal": {"approvals_required": 2, "escalate_to": ["eve"]}}
        },  # the agent allows anyone
        {"sandbox": "workspace-write"},
        {"sandbox": "read-only"},
        {"user": "otto"},
    ],
)
def test_a_session_that_only_tightens_is_started(body: dict[str, Any]) -> None:
    assert refused(OTTO, **body) == ""


def test_a_session_restates_only_what_it_changes() -> None:
    """Left out, `approvals_required` and `allow_grants` are the agent's for that tool (its own, else
    its `*`); `approvers` left out keeps its meaning (the session's approvers); what is said is kept."""
    asked: dict[str, Any] = {
        "approvers": ["oscar"],
        "policies": {"sql": {"escalate_to": ["dave"]}, "terminal": {"approvals_required": 2}},
    }
    completed = with_agents_defaults(CreateSessionRequest.model_validate(asked), floor_of(CAREFUL, WW))
    assert completed.policies == {
        "sql": DecisionPolicy(approvals_required=2, allow_grants=False, escalate_to=["dave"]),
        "terminal": DecisionPolicy(approvals_required=2, allow_grants=True),
    }
    assert refused(OTTO, **asked) == ""
    loosened: dict[str, Any] = {"sql": {"approvals_required": 1}}
    assert "approvals_required 1 is below the agent's 2" in refused(OTTO, policies=loosened), "said is kept"


def test_the_agents_sandbox_is_the_floor_and_a_profiles_counts_as_the_sessions_choice() -> None:
    strict = AgentSpec(name="strict", sandbox=RO)
    assert refused(OTTO, strict, sandbox="workspace-write") == (
        "sandbox workspace-write is wider than the agent's read-only: a session may only narrow it "
        "(an admin may widen it)"
    )
    assert refused(OTTO, strict, sandbox="read-only") == ""
    assert refused(OTTO, strict, RO, profile="restricted") == ""
    assert "sandbox (of profile 'wide') full is wider" in refused(OTTO, CAREFUL, FULL, profile="wide")
    assert refused(OTTO, CAREFUL, FULL, sandbox="read-only") == "", "the session's own choice wins"
    assert refused(ADA, strict, FULL) == ""


def test_a_caller_acts_only_in_its_projects_admin_or_not() -> None:
    scoped = Caller("otto", Role.operator, projects=frozenset({"shop", "blog"}))
    assert refused(scoped, project="bank") == (
        "project 'bank' is not one otto may act in (blog, shop): a key acts only in its projects"
    )
    assert refused(scoped, project="shop") == ""
    assert refused(scoped) == "project: otto acts only in its projects (blog, shop); name one", (
        "a scoped key starts nothing of no project"
    )
    assert "project 'bank'" in refused(
        Caller("ada", Role.admin, projects=frozenset({"shop"})), project="bank"
    )
    assert refused(OTTO, project="bank") == "", "a key with no projects named acts in every one"


def test_with_keys_off_the_user_named_stays_and_every_refusal_is_listed() -> None:
    assert refused(Caller(None, Role.operator), user="alice") == ""
    said = refused(OTTO, sandbox="full", user="alice", policies={"sql": {"approvals_required": 1}})
    assert said.count("; ") == 3 and said.startswith("policies.sql.approvals_required 1"), said


# The property: whatever a non-admin is allowed never loosens any tool.

PEOPLE = st.sampled_from(["oscar", "pat", "eve", "lark:oscar"])
POLICIES = st.builds(
    DecisionPolicy,
    approvers=st.none() | st.lists(PEOPLE, max_size=3),
    approvals_required=st.integers(1, 2),
    escalate_to=st.lists(PEOPLE, max_size=2),
    allow_grants=st.booleans(),
)
LAYERS = st.dictionaries(st.sampled_from(["sql", "terminal", "*"]), POLICIES, min_size=1, max_size=3)
SANDBOXES = st.none() | st.sampled_from(SandboxProfile)
TOOLS = ["sql", "terminal", "mcp"]
"""Tools the layers may name, and one neither does (only `*` reaches it)."""


def deciders(policy: DecisionPolicy, session_approvers: list[str]) -> frozenset[str] | None:
    """Who may decide a request opened under `policy` (None: anyone): its approvers, else the
    session's (none: anyone), and those it escalates to; one person under either spelling."""
    approvers = policy.approvers if policy.approvers is not None else session_approvers
    if not approvers:
        return None
    return frozenset(name.removeprefix("lark:") for name in [*approvers, *policy.escalate_to])


@settings(max_examples=1000, deadline=None)
@given(
    agent_policies=LAYERS,
    session_policies=LAYERS,
    session_approvers=st.lists(PEOPLE, max_size=2),
    agent_sandbox=SANDBOXES,
    deployment=st.sampled_from(SandboxProfile),
    sandbox=SANDBOXES,
    profile=SANDBOXES,
    role=st.sampled_from([Role.viewer, Role.operator, Role.approver]),
)
def test_what_a_non_admin_may_start_is_never_looser_than_its_floor(
    agent_policies: dict[str, DecisionPolicy],
    session_policies: dict[str, DecisionPolicy],
    session_approvers: list[str],
    agent_sandbox: SandboxProfile | None,
    deployment: SandboxProfile,
    sandbox: SandboxProfile | None,
    profile: SandboxProfile | None,
    role: Role,
) -> None:
    agent = AgentSpec(name="random", policies=agent_policies, sandbox=agent_sandbox)
    agents_floor = floor_of(agent, deployment)
    body = CreateSessionRequest(policies=session_policies, approvers=session_approvers, sandbox=sandbox)
    body = with_agents_defaults(body, agents_floor)  # as POST /sessions completes it
    if refusals(body, Caller("otto", role), agents_floor, profile):
        return
    for tool in TOOLS:
        runs = policy_for(tool, body.policies or {}, agent_policies)  # as the session's workflow reads them
        floor = policy_for(tool, agent_policies)
        assert runs.approvals_required >= floor.approvals_required, tool
        allowed, deciding = deciders(floor, []), deciders(runs, session_approvers)
        assert allowed is None or (deciding is not None and deciding <= allowed), (tool, deciding, allowed)
        assert floor.allow_grants or not runs.allow_grants, tool
    chosen, most = sandbox or profile, agent_sandbox or deployment
    assert chosen is None or WIDTH.index(chosen) <= WIDTH.index(most)
