"""Who a principal is, decided once at the door, so workflows compare principals as given.

A chat user may be named with their channel's prefix (`lark:ou_1`, as policies and HTTP callers
often write a Lark open_id) or bare (`ou_1`, as the chat itself gives them): one person. Every
door a principal comes in by (a decision's principal, a session's or graph's approvers and
policies, an agent's declared policies, a rule's maker) spells them one way, the bare id.
"""

from __future__ import annotations

from contracts import DecisionPolicy

SAME_PERSON_PREFIXES = ("lark:",)
"""Prefixes that name the same person as the bare id after them."""


def person(principal: str) -> str:
    """The one spelling of `principal`: a Lark open_id with or without its `lark:` prefix is `ou_…`."""
    for prefix in SAME_PERSON_PREFIXES:
        if principal.startswith(prefix):
            return principal.removeprefix(prefix)
    return principal


def people(principals: list[str]) -> list[str]:
    """Each principal in its one spelling, in order."""
    return [person(name) for name in principals]


def policy_people(policy: DecisionPolicy) -> DecisionPolicy:
    """The policy with its approvers and `escalate_to` in their one spelling."""
    approvers = people(policy.approvers) if policy.approvers is not None else None
    return policy.model_copy(update={"approvers": approvers, "escalate_to": people(policy.escalate_to)})


def policies_people(policies: dict[str, DecisionPolicy]) -> dict[str, DecisionPolicy]:
    """Every policy of a tool map with its principals in their one spelling."""
    return {tool: policy_people(policy) for tool, policy in policies.items()}
