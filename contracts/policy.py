"""Who may decide a tool call: one policy per tool (or `*`), set per agent and per session."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt

from .base import Contract
from .principals import PersonId

ANY_TOOL = "*"
"""The key of a policy for every tool without one of its own."""


class DecisionPolicy(Contract):
    """Who decides a tool's calls, how many must agree, whom to remind, and whether grants are allowed.

    A session's policy for a tool wins over its agent's; a tool's own policy wins over `*`.
    Principals are HTTP principals or Lark open_ids (`ou_…` or `lark:ou_…`, read as `ou_…`: `PersonId`)."""

    approvers: list[PersonId] | None = Field(
        default=None, description="Who may decide (None: the session's approvers; empty: anyone)."
    )
    approvals_required: StrictInt = Field(
        default=1,
        ge=1,
        le=2,
        description="2: the two-person rule (two distinct approvers; a denial by either denies). "
        "Tools marked `critical` always need 2.",
    )
    escalate_to: list[PersonId] = Field(
        default_factory=list,
        description="Who is asked too when nobody decided after `escalate_after_seconds` (they may decide).",
    )
    escalate_after_seconds: StrictInt | None = Field(
        default=None, gt=0, description="When to escalate (None: half the approval timeout)."
    )
    allow_grants: StrictBool = Field(
        default=True, description="False: an approval may not grant later calls."
    )


def policy_for(tool_id: str, *layers: dict[str, DecisionPolicy]) -> DecisionPolicy:
    """The policy of `tool_id`: the first layer (most specific first) naming the tool, else `*`."""
    for layer in layers:
        if tool_id in layer:
            return layer[tool_id]
    for layer in layers:
        if ANY_TOOL in layer:
            return layer[ANY_TOOL]
    return DecisionPolicy()
