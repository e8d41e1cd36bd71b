"""What a new session may set: never looser than its agent's and the deployment's floor.

A session's `policies` win over its agent's, its `sandbox` over the agent's and the deployment's
(`SYNAPSE_TERMINAL_SANDBOX`), and its `user` brings that person's rules; so what `POST /sessions`
asks is checked here first, and a session may only tighten. For each tool its `policies` name
(or `*`), against the agent's policy for it (`policy_for` over the agent's layer alone, which is
what the session's policy replaces there):
- `approvals_required` may rise, never fall;
- its approvers must be people the agent's policy names, where it names any (where it allows
  anyone, any list narrows it);
- `escalate_to` must be people the agent's policy lets decide (its approvers and its
  `escalate_to`), where it names any approvers; when to escalate is the session's to choose;
- `allow_grants` may be turned off, never on where the agent's is off.
`sandbox` (the `profile`'s when the session names none) may be no wider than the agent's, else the
deployment's: `read-only` < `workspace-write` < `full`. With API keys on, `user` is the caller.
An admin may loosen each of these (with keys off every caller is one). `project` must be one the
caller may act in, an admin's too.

A session's policy for a tool that leaves out `approvals_required` or `allow_grants` takes the agent's
(`with_agents_defaults`): a session restates only what it changes.

`approvers: None` in a policy means "the session's approvers" (the request's `approvers`; none:
anyone), so it is read for what it will mean when the session runs:
- the agent's None lets the session say who decides: it counts as anyone, and any list narrows it;
- the session's None stands for the session's approvers: where the agent names approvers, those
  must be among them (no session approvers is anyone, which is refused there).
Principals compare as people (`lark:ou_1` is `ou_1`). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from contracts import (
    AgentSpec,
    CreateSessionRequest,
    DecisionPolicy,
    Role,
    SandboxProfile,
    person,
    policy_for,
)
from core.security import Caller
from workflows.supervision.checks import WIDTH

RULES = (
    "The caller's role may not do this; or (with API keys on) the session would loosen its floor: "
    "`policies` may only raise `approvals_required`, name approvers and `escalate_to` among those the "
    "agent's policy names, and turn grants off; `sandbox` (or the `profile`'s) may be no wider than "
    "the agent's, else SYNAPSE_TERMINAL_SANDBOX; `user` is the caller. An admin may loosen each. "
    "`project` must be one the caller's key may act in. `detail` names the rule and the values."
)
"""What a 403 of `POST /sessions` means (its OpenAPI description)."""


@dataclass(frozen=True)
class Floor:
    """What a session starts from: its agent's policies and the sandbox its commands would run in."""

    policies: dict[str, DecisionPolicy]
    sandbox: SandboxProfile
    sandbox_of: str
    """Whose sandbox that is, for messages: "the agent's" or "the deployment's (...)"."""


def floor_of(agent: AgentSpec, deployment_sandbox: SandboxProfile) -> Floor:
    """The floor a session of `agent` starts from (`deployment_sandbox`: SYNAPSE_TERMINAL_SANDBOX)."""
    if agent.sandbox is not None:
        return Floor(agent.policies, agent.sandbox, "the agent's")
    return Floor(agent.policies, deployment_sandbox, "the deployment's (SYNAPSE_TERMINAL_SANDBOX)")


INHERITED = ("approvals_required", "allow_grants")
"""What a session's policy for a tool takes from its agent's when it leaves it out: a session restates
only what it changes (the defaults, one approval and grants on, would be looser than such an agent's)."""


def with_agents_defaults(body: CreateSessionRequest, floor: Floor) -> CreateSessionRequest:
    """`body` with each of its `policies` completed from the agent's policy for that tool (`INHERITED`
    fields the caller left out); `approvers` left out keeps its meaning, the session's approvers."""
    if not body.policies:
        return body
    policies = {
        tool: wanted.model_copy(
            update={
                name: getattr(policy_for(tool, floor.policies), name)
                for name in INHERITED
                if name not in wanted.model_fields_set
            }
        )
        for tool, wanted in body.policies.items()
    }
    return body.model_copy(update={"policies": policies})


def refusals(
    body: CreateSessionRequest, caller: Caller, floor: Floor, profile_sandbox: SandboxProfile | None = None
) -> list[str]:
    """Why `caller` may not start the session `body` asks for, one rule each (empty: it may).

    `profile_sandbox`: the sandbox of the session's profile, its choice when `body` names none.
    """
    found: list[str] = []
    if body.project is None and not caller.may_act_in(None):
        found.append(
            f"project: {caller.principal or 'the caller'} acts only in its projects "
            f"({', '.join(sorted(caller.projects or ()))}); name one"
        )
    elif not caller.may_act_in(body.project):
        found.append(
            f"project {body.project!r} is not one {caller.principal or 'the caller'} may act in "
            f"({', '.join(sorted(caller.projects or ())) or 'none'}): a key acts only in its projects"
        )
    if caller.role >= Role.admin:
        return found
    found += policy_refusals(body.policies or {}, body.approvers or [], floor.policies)
    sandbox = body.sandbox or profile_sandbox
    if sandbox is not None and WIDTH.index(sandbox) > WIDTH.index(floor.sandbox):
        said = "sandbox" if body.sandbox is not None else f"sandbox (of profile {body.profile!r})"
        found.append(
            f"{said} {sandbox} is wider than {floor.sandbox_of} {floor.sandbox}: a session may only "
            "narrow it (an admin may widen it)"
        )
    if caller.principal is not None and body.user not in (None, caller.principal):
        found.append(
            f"user {body.user!r} is not the caller {caller.principal!r}: with API keys on a session is "
            "for its caller (an admin may name another person)"
        )
    return found


def policy_refusals(
    policies: dict[str, DecisionPolicy], session_approvers: list[str], agent: dict[str, DecisionPolicy]
) -> list[str]:
    """Where the session's `policies` (with its `session_approvers`) are looser than the `agent`'s."""
    found: list[str] = []
    for tool, wanted in policies.items():
        floor, where = policy_for(tool, agent), f"policies.{tool}"
        if wanted.approvals_required < floor.approvals_required:
            found.append(
                f"{where}.approvals_required {wanted.approvals_required} is below the agent's "
                f"{floor.approvals_required}: a session may only raise it (an admin may lower it)"
            )
        if floor.approvers:
            found += _decider_refusals(where, wanted, session_approvers, floor)
        if wanted.allow_grants and not floor.allow_grants:
            found.append(
                f"{where}.allow_grants true where the agent's is false: a session may only turn grants "
                "off (an admin may turn them on)"
            )
    return found


def _decider_refusals(
    where: str, wanted: DecisionPolicy, session_approvers: list[str], floor: DecisionPolicy
) -> list[str]:
    """Who may decide under `wanted`, against a `floor` that names its approvers."""
    found: list[str] = []
    allowed = floor.approvers or []
    if wanted.approvers is None:
        said, named = f"{where}.approvers (none: the session's approvers)", session_approvers
    else:
        said, named = f"{where}.approvers", wanted.approvers
    only = "a session may only name approvers among them (an admin may widen it)"
    if not named:
        found.append(f"{said} let anyone decide, wider than the agent's {_names(allowed)}: {only}")
    elif outside := _outside(named, allowed):
        found.append(f"{said} name {_names(outside)}, not among the agent's {_names(allowed)}: {only}")
    deciders = [*allowed, *floor.escalate_to]
    if escalating := _outside(wanted.escalate_to, deciders):
        found.append(
            f"{where}.escalate_to names {_names(escalating)}, not among who the agent's policy lets "
            f"decide ({_names(deciders)}): a session may only escalate to them (an admin may widen it)"
        )
    return found


def _outside(names: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The names that are none of the people `allowed` names."""
    people = {person(name) for name in allowed}
    return [name for name in names if person(name) not in people]


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "anyone"
