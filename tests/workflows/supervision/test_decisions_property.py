"""The one door over random sequences of decisions (hypothesis): requests of every kind opened, then
decisions from random doors, principals and roles taken one by one by the real `Decisions.decide`
(the signal path: a refusal is audited) in a real workflow on the dev server (`probe`).

Invariants, checked on every example:
- one verdict per request: once decided, an outcome never changes, and a request is decided at
  most once (one final audit entry); every request ends decided or pending, never both;
- nothing below approver decides: every decision that counted or decided came from an approver or
  an admin among the request's approvers (or the request named none); a two-person request is
  approved only once two different people approved it;
- every audit entry names who acted and where; every decision leaves either exactly one
  `rejected` entry, or its `approved` / `denied` / `answered` / `declined` / `approval_counted`
  entry (with `edited` / `granted` for an edit or a grant), with its principal and channel.
And (`replay`): which decisions are refused, counted or decided, the final decided and pending
sets, and each outcome's verdict and decider agree with a small model of the rules.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.worker import Worker, WorkflowRunner

from contracts import (
    PERSON_SOURCES,
    Answer,
    AuditKind,
    Decision,
    DecisionSource,
    GrantScope,
    InteractionType,
    Role,
    SandboxProfile,
    Verdict,
)
from core.runner import ContextFree
from worker import WORKFLOW_RUNNER, workflow_runner

from .probe import STEMS, Asked, DecisionsProbe, ProbeInput, ProbeResult

UNKNOWN = "tool_99"
"""An id no request has."""
PRINCIPALS = ["ann", "lark:ou_bo", "ou_bo", "cy", "dee"]
"""`lark:ou_bo` and `ou_bo` are one person."""
APPROVERS = [[], ["ann"], ["ann", "ou_bo"], ["lark:ou_bo", "cy"], ["dee", "lark:ou_bo", "ann"]]
ROLES: list[Role | None] = [None, Role.viewer, Role.operator, *[Role.approver] * 3, *[Role.admin] * 2]
"""Mostly roles that may decide."""
CHANNELS = {
    DecisionSource.HTTP: ["http", "cli"],
    DecisionSource.CLICK: ["lark", "dingtalk"],
    DecisionSource.CHAT: ["lark", "dingtalk"],
    DecisionSource.RELAY: ["lark", "http"],
}
SAID: list[Verdict | Answer] = [
    Verdict(approved=True),
    Verdict(approved=True),
    Verdict(approved=False),
    Answer(text="orders"),
    Verdict(approved=True, edit={"command": "touch y"}),
    *[Verdict(approved=True, grant=scope) for scope in GrantScope],
    *[Verdict(approved=True, sandbox=profile) for profile in SandboxProfile],
    Verdict(approved=False, grant=GrantScope.SESSION),
    Verdict(approved=True, edit={"command": "touch y"}, grant=GrantScope.SESSION),
]
"""What a decision may say: mostly yes and no, now and then an answer, an edit, a grant or a sandbox."""
YES, NO = Verdict(approved=True), Verdict(approved=False)
WIDTH = [SandboxProfile.READ_ONLY, SandboxProfile.WORKSPACE_WRITE, SandboxProfile.FULL]
FINAL = {AuditKind.APPROVED, AuditKind.DENIED, AuditKind.ANSWERED, AuditKind.DECLINED}
REFUSED, COUNTED, DECIDED = "refused", "counted", "decided"


def ids_of(requests: list[Asked]) -> list[str]:
    """The ids the probe's requests get: `<stem>_<n>`, numbered from 1 in order."""
    return [f"{STEMS[asked.kind]}_{n}" for n, asked in enumerate(requests, 1)]


# ---------------------------------------------------------------------------- the reference model


def same(one: str, other: str) -> bool:
    """One person: a Lark open_id with or without `lark:`."""
    return one.removeprefix("lark:") == other.removeprefix("lark:")


def fits(asked: Asked, decision: Decision) -> bool:
    """What was said fits what was asked, within the floor."""
    said = decision.said
    if isinstance(said, Answer):
        return asked.kind == InteractionType.USER_INPUT
    extras = said.edit is not None or said.grant is not None or said.sandbox is not None
    if asked.kind == InteractionType.USER_INPUT:
        return not said.approved and not extras
    if not extras:
        return True
    if asked.kind != InteractionType.TOOL_APPROVAL or not said.approved or asked.approvals_required > 1:
        return False
    if said.grant is not None and (said.grant not in asked.grants or said.edit is not None):
        return False
    if said.sandbox is not None:
        wider = asked.sandbox is not None and WIDTH.index(said.sandbox) > WIDTH.index(asked.sandbox)
        return said.sandbox in asked.sandboxes and (not wider or decision.role == Role.admin)
    return True


@dataclass
class Model:
    """The rules, replayed: who approved each pending request so far, and each decided one's
    (approved, decided by)."""

    requests: dict[str, Asked]
    approved_by: dict[str, list[str]] = field(default_factory=dict)
    decided: dict[str, tuple[bool, str]] = field(default_factory=dict)

    def take(self, decision: Decision) -> tuple[str, list[AuditKind]]:
        """What the decision does, and the audit entries it leaves."""
        asked = self.requests.get(decision.interaction_id)
        said, who = decision.said, decision.principal
        approving = isinstance(said, Verdict) and said.approved
        counted = self.approved_by.setdefault(decision.interaction_id, [])
        if (
            asked is None
            or decision.interaction_id in self.decided
            or decision.role not in (Role.approver, Role.admin)
            or (asked.approvers and not any(same(who, a) for a in asked.approvers))
            or (approving and any(same(who, p) for p in counted))
            or not fits(asked, decision)
        ):
            return REFUSED, [AuditKind.REJECTED]
        if approving and len(counted) + 1 < asked.approvals_required:
            counted.append(who)
            return COUNTED, [AuditKind.APPROVAL_COUNTED]
        yes = approving or isinstance(said, Answer)
        self.decided[decision.interaction_id] = (yes, who)
        question = asked.kind == InteractionType.USER_INPUT
        kinds = [
            (AuditKind.ANSWERED if yes else AuditKind.DECLINED)
            if question
            else (AuditKind.APPROVED if yes else AuditKind.DENIED)
        ]
        if isinstance(said, Verdict) and said.approved and said.edit is not None:
            kinds.append(AuditKind.EDITED)
        if isinstance(said, Verdict) and said.approved and said.grant is not None:
            kinds.append(AuditKind.GRANTED)
        return DECIDED, kinds


def replay(probe: ProbeInput) -> tuple[Model, list[tuple[str, list[AuditKind]]]]:
    """The model after the probe's decisions, and what each did."""
    model = Model(requests=dict(zip(ids_of(probe.requests), probe.requests, strict=True)))
    return model, [model.take(decision) for decision in probe.decisions]


# ---------------------------------------------------------------------------- random probes


@st.composite
def requests(draw: st.DrawFn) -> Asked:
    kind = draw(st.sampled_from(list(STEMS)))
    approvers = draw(st.sampled_from(APPROVERS))
    if kind != InteractionType.TOOL_APPROVAL:
        return Asked(kind=kind, approvers=approvers)
    return Asked(
        kind=kind,
        approvers=approvers,
        approvals_required=draw(st.sampled_from([1, 2])),
        grants=draw(st.lists(st.sampled_from(list(GrantScope)), unique=True)),
        sandboxes=draw(st.lists(st.sampled_from(list(SandboxProfile)), unique=True)),
        sandbox=draw(st.sampled_from([None, *SandboxProfile])),
    )


FITTING: dict[InteractionType, list[Verdict | Answer]] = {
    InteractionType.TOOL_APPROVAL: [*[Verdict(approved=True)] * 4, Verdict(approved=False), *SAID[4:]],
    InteractionType.USER_INPUT: [Answer(text="orders"), Verdict(approved=False)],
    InteractionType.CONFIRMATION: [Verdict(approved=True), Verdict(approved=False)],
}
"""What a decision on each kind of request mostly says (what fits it, and extras it may not take)."""


def fits_best(asked: Asked) -> list[Verdict | Answer]:
    """What fits a request best: a two-person request takes a plain yes or no, mostly yes."""
    return [YES, YES, YES, NO] if asked.approvals_required > 1 else FITTING[asked.kind]


@st.composite
def decisions(draw: st.DrawFn, asked: list[Asked]) -> Decision:
    """A decision on one of the requests (or, now and then, on none), mostly by one of its
    approvers saying something that fits it, else by anyone saying anything."""
    ids = ids_of(asked)
    n = draw(st.integers(0, len(ids) * 4))
    unknown = n == len(ids) * 4
    request = None if unknown else asked[n % len(ids)]
    fitting = request if request is not None and draw(st.booleans()) else None
    source = draw(st.sampled_from(PERSON_SOURCES))
    return Decision(
        interaction_id=UNKNOWN if unknown else ids[n % len(ids)],
        principal=draw(st.sampled_from(fitting.approvers if fitting and fitting.approvers else PRINCIPALS)),
        role=draw(st.sampled_from(ROLES)),
        channel=draw(st.sampled_from(CHANNELS[source])),
        source=source,
        said=draw(st.sampled_from(fits_best(fitting) if fitting else SAID)),
    )


@st.composite
def probes(draw: st.DrawFn) -> ProbeInput:
    asked = draw(st.lists(requests(), min_size=1, max_size=3))
    return ProbeInput(requests=asked, decisions=draw(st.lists(decisions(asked), min_size=1, max_size=12)))


def by(
    principal: str, interaction_id: str, said: Verdict | Answer, role: Role | None = Role.approver
) -> Decision:
    return Decision(
        interaction_id=interaction_id,
        principal=principal,
        role=role,
        channel="lark",
        source=DecisionSource.CLICK,
        said=said,
    )


TWO_PEOPLE = ProbeInput(
    requests=[Asked(kind=InteractionType.TOOL_APPROVAL, approvers=APPROVERS[3], approvals_required=2)],
    decisions=[
        by("lark:ou_bo", "tool_1", YES),
        by("ou_bo", "tool_1", YES),  # the same person again
        by("cy", "tool_1", YES, Role.operator),
        by("ann", "tool_1", YES),  # not an approver of it
        by("cy", "tool_1", YES),
        by("lark:ou_bo", "tool_1", NO),  # already decided
    ],
)
"""A two-person approval: refused to the same person twice, to an operator and to a stranger."""
EVERY_KIND = ProbeInput(
    requests=[
        Asked(kind=InteractionType.USER_INPUT),
        Asked(kind=InteractionType.CONFIRMATION, approvers=["ann"]),
        Asked(
            kind=InteractionType.TOOL_APPROVAL,
            grants=[GrantScope.SESSION],
            sandboxes=list(SandboxProfile),
            sandbox=SandboxProfile.READ_ONLY,
        ),
    ],
    decisions=[
        by("dee", "input_1", YES),  # a question takes an answer
        by("dee", "input_1", Answer(text="orders"), None),
        by("dee", "input_1", Answer(text="orders")),
        by("dee", "gate_2", YES),
        by("ann", "gate_2", Answer(text="yes")),
        by("ann", "gate_2", NO),
        by("cy", "tool_3", Verdict(approved=True, sandbox=SandboxProfile.FULL)),  # wider: an admin's
        by(
            "cy",
            "tool_3",
            Verdict(approved=True, sandbox=SandboxProfile.FULL, grant=GrantScope.SESSION),
            Role.admin,
        ),
        by("cy", UNKNOWN, NO),
    ],
)
"""Each kind of request decided once, after refusals of what does not fit it."""


# ---------------------------------------------------------------------------- the workflow


def probe_runner(converter: DataConverter) -> WorkflowRunner:
    """The worker's runner (`worker.workflow_runner`), with `tests` passed through its sandbox too."""
    sandboxed = dataclasses.replace(
        WORKFLOW_RUNNER, restrictions=WORKFLOW_RUNNER.restrictions.with_passthrough_modules("tests")
    )
    return ContextFree(sandboxed) if isinstance(workflow_runner(converter), ContextFree) else sandboxed


@pytest.fixture
async def probe_worker(client: Client, converter: DataConverter, task_queue: str) -> AsyncIterator[None]:
    async with Worker(
        client, task_queue=task_queue, workflows=[DecisionsProbe], workflow_runner=probe_runner(converter)
    ):
        yield


async def run_probe(client: Client, task_queue: str, probe: ProbeInput) -> ProbeResult:
    return await client.execute_workflow(
        DecisionsProbe.run, probe, id=f"decisions-probe-{uuid.uuid4().hex[:12]}", task_queue=task_queue
    )


def check(probe: ProbeInput, result: ProbeResult) -> None:
    """Every invariant of the module docstring, on one run."""
    ids = ids_of(probe.requests)
    asked = dict(zip(ids, probe.requests, strict=True))
    assert [r.interaction_id for r in result.opened] == ids
    assert len(result.steps) == len(probe.decisions)

    # every audit entry names who acted and where
    for entry in result.audit:
        assert entry.principal and entry.channel, entry

    # one verdict per request
    before: dict[str, Any] = {}
    for n, step in enumerate(result.steps):
        after = {key: outcome.model_dump() for key, outcome in step.decided.items()}
        assert {key: after.get(key) for key in before} == before, f"step {n} changed an outcome"
        assert len(after) - len(before) <= 1, f"step {n} decided more than one request"
        before = after
    finals = [e.interaction_id or "" for e in result.audit if e.kind in FINAL]
    assert sorted(finals) == sorted(result.decided), "each decided request has exactly one final entry"
    pending = [r.interaction_id for r in result.pending]
    assert not set(pending) & set(result.decided)
    assert sorted([*pending, *result.decided]) == sorted(ids)

    # each decision: one refusal, or what it did, by whom and where; nothing below approver decides
    approvals: dict[str, set[str]] = {}
    for n, (decision, step) in enumerate(zip(probe.decisions, result.steps, strict=True)):
        kinds = [entry.kind for entry in step.audit]
        assert kinds, f"decision {n} left no audit entry"
        for entry in step.audit:
            assert (entry.principal, entry.channel, entry.interaction_id) == (
                decision.principal,
                decision.channel,
                decision.interaction_id,
            ), (n, entry)
        if AuditKind.REJECTED in kinds:
            assert kinds == [AuditKind.REJECTED], (n, kinds)
            continue
        assert kinds[0] in {*FINAL, AuditKind.APPROVAL_COUNTED}, (n, kinds)
        assert set(kinds[1:]) <= {AuditKind.EDITED, AuditKind.GRANTED}, (n, kinds)
        request = asked[decision.interaction_id]
        assert decision.role in (Role.approver, Role.admin), f"decision {n} by a {decision.role} counted"
        assert not request.approvers or any(same(decision.principal, a) for a in request.approvers), (
            f"decision {n} by {decision.principal}, not among {request.approvers}, counted"
        )
        if kinds[0] in (AuditKind.APPROVAL_COUNTED, AuditKind.APPROVED):
            approvals.setdefault(decision.interaction_id, set()).add(decision.principal.removeprefix("lark:"))
    for interaction_id, outcome in result.decided.items():
        people = approvals.get(interaction_id, set())
        if outcome.approved and asked[interaction_id].approvals_required == 2:
            assert len(people) == 2, f"{interaction_id} approved by {sorted(people)}"
            assert len({p.removeprefix("lark:") for p in outcome.approvals}) == 2, outcome

    # the reference model agrees
    model, did = replay(probe)
    for n, (step, (what, kinds)) in enumerate(zip(result.steps, did, strict=True)):
        assert [entry.kind for entry in step.audit] == kinds, f"decision {n}: the model says {what}"
    assert {key: (o.approved, o.decided_by) for key, o in result.decided.items()} == model.decided
    assert sorted(pending) == sorted(set(ids) - set(model.decided))
    for waiting in result.pending:
        assert waiting.approved_by == model.approved_by.get(waiting.interaction_id, [])


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(probe=probes())
@example(probe=TWO_PEOPLE)
@example(probe=EVERY_KIND)
async def test_every_door_takes_one_verdict_per_request_from_an_approver(
    client: Client, task_queue: str, probe_worker: None, probe: ProbeInput
) -> None:
    check(probe, await run_probe(client, task_queue, probe))


async def test_the_examples_decide_what_they_say(client: Client, task_queue: str, probe_worker: None) -> None:
    """The explicit examples reach what they were written for (the model agrees on the rest)."""
    two = await run_probe(client, task_queue, TWO_PEOPLE)
    outcome = two.decided["tool_1"]
    # `lark:ou_bo` is recorded in its one spelling (`contracts.PersonId`)
    assert outcome.approved and outcome.decided_by == "cy" and outcome.approvals == ["ou_bo", "cy"]
    every = await run_probe(client, task_queue, EVERY_KIND)
    assert {key: (o.approved, o.decided_by) for key, o in every.decided.items()} == {
        "input_1": (True, "dee"),
        "gate_2": (False, "ann"),
        "tool_3": (True, "cy"),
    }
    assert every.decided["tool_3"].grant_id == "grant_1"
