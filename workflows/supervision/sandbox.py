"""Which sandbox an approved tool call runs in, as people are shown it and as the run gets it.

The tool's assessment names its default (the worker's SYNAPSE_TERMINAL_SANDBOX; None for a tool
that cannot sandbox its calls). The session's choice, else its agent's, replaces it on the request;
the approver may choose another for this call (`response_data.sandbox`), and a grant carries the
choice of the approval that made it. Pure functions over contracts: no I/O, no time.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import InteractionOutcome, SandboxProfile, ToolApprovalAsk, ToolAssessment

PROFILES = [str(profile) for profile in SandboxProfile]


def offered(assessment: ToolAssessment) -> list[str]:
    """The profiles an approver may choose for this call (none when its tool cannot sandbox)."""
    return list(PROFILES) if assessment.sandbox is not None else []


def _runs_in(assessment: ToolAssessment, profile: SandboxProfile) -> ToolAssessment:
    return assessment.model_copy(
        update={
            "sandbox": profile,
            "context": assessment.context.model_copy(update={"sandbox": str(profile), "sandbox_note": None}),
        }
    )


def proposed(assessment: ToolAssessment, chosen: SandboxProfile | None) -> ToolAssessment:
    """The assessment of a call that asks, with the profile it would run in (the session's or
    agent's `chosen`, else the tool's default) in `sandbox` and in the `context` people see."""
    if assessment.sandbox is None or not assessment.needs_approval:
        return assessment
    return _runs_in(assessment, chosen or assessment.sandbox)


def decided(assessment: ToolAssessment, outcome: InteractionOutcome) -> ToolAssessment:
    """The assessment of an approved call, with the profile it runs in: the approver's choice (or
    the grant's that allowed it), else the one proposed."""
    if assessment.sandbox is None:
        return assessment
    choice = (outcome.response_data or {}).get("sandbox")  # the approver's, or the grant's
    return _runs_in(assessment, SandboxProfile(choice)) if choice in PROFILES else assessment


def granted(ask: ToolApprovalAsk, response_data: dict[str, Any] | None) -> SandboxProfile | None:
    """The profile a grant made by this approval carries (None: the tool cannot sandbox)."""
    if not ask.sandboxes:
        return None
    choice = (response_data or {}).get("sandbox") or ask.sandbox
    return SandboxProfile(choice) if choice in PROFILES else None
