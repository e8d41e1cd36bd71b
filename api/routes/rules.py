"""Approval rules: lasting allow / ask / deny decisions about kinds of tool calls, for every channel.

Anyone may read them, and ask what "allow always" would save for a call (`POST /rule-offers`, the
console's button; the REPL works it out itself with the same `activities.rules.offers`). Rules have
owners:
- a user rule only for oneself (an admin: for anyone);
- a project rule only by that project's approvers (role approver or higher, and a key that may act
  in the project) or an admin;
- a key scoped to projects (any role) sees and changes only the rules of its projects and its own
  user rules; it sees the global rules (they decide its sessions' calls) but may not change them;
  any other rule is 404 to it, as if it did not exist;
- a global rule, which every session obeys, only by an admin;
- a rule is deleted by the one who made it (who may still make it) or an admin.
Who made or deleted a rule is the API key's principal; with keys off (everyone is admin) it is the
name given (`created_by`, DELETE's `?principal=`), else `anonymous`. A deleted rule is kept as a
tombstone: its id is never reused. The workers read the same store at every assessment: a rule
saved now decides the next call.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from activities.rules import offers
from contracts import ApprovalRule, NewRule, RuleOffer, RuleOfferRequest, RuleScope, person
from core.rules.match import problems
from core.rules.profiles import PROFILES
from core.rules.store import RuleDeleted, RuleNotFound, RuleStore
from core.security import Caller, Role

from ..deps import Approver, RulesDep, Viewer
from ..errors import ERROR_RESPONSES

ANONYMOUS = "anonymous"
"""Who made or deleted a rule when keys are off and no name was given."""

router = APIRouter(tags=["rules"])

RuleId = Annotated[
    str,
    Path(
        pattern=r"^rule_(?:[0-9]+|[0-9A-HJKMNP-TV-Z]{26})$",
        description="The rule, e.g. `rule_01JDQ8Z5V7C3M2K9T4XWB6N1RA` (rules saved before: `rule_3`).",
    ),
]
Principal = Annotated[
    str | None,
    Query(
        max_length=200,
        description="With keys off: who deletes the rule (recorded as its `deleted_by`; `anonymous` "
        "when absent). Ignored with keys on: the key's principal is recorded.",
    ),
]


@router.get("/rules", response_model=list[ApprovalRule], responses=ERROR_RESPONSES(401, 403, 422))
async def list_rules(
    store: RulesDep,
    caller: Viewer,
    tool: Annotated[
        str | None, Query(description="Only this tool's rules (`*` rules are their own).")
    ] = None,
    scope: RuleScope | None = None,
    project: str | None = None,
    user: str | None = None,
    profile: Annotated[
        str | None, Query(description="Also list this profile's built-in rules (`restricted`, `enterprise`).")
    ] = None,
) -> list[ApprovalRule]:
    """The saved rules, oldest first (and a profile's, first, when asked for). A key scoped to
    projects sees their rules, its own user rules and the global ones (which apply to its sessions)."""
    if profile is not None and profile not in PROFILES:
        raise HTTPException(422, f"profile: {profile!r} does not exist; known: {', '.join(PROFILES)}")
    saved = await asyncio.to_thread(store.all, tool=tool, scope=scope, project=project, user=user)
    return [
        *(PROFILES[profile].rules if profile else ()),
        *(rule for rule in saved if in_reach(caller, rule)),
    ]


@router.get("/rules/{rule_id}", response_model=ApprovalRule, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def get_rule(rule_id: RuleId, store: RulesDep, caller: Viewer) -> ApprovalRule:
    """One live rule; a deleted one is 404 saying who deleted it and when; one out of a scoped key's
    reach (`GET /rules`) 404 as if it did not exist."""
    try:
        return await _reachable(store, caller, rule_id)
    except RuleNotFound as err:
        raise HTTPException(404, str(err)) from None


@router.post("/rules", status_code=201, response_model=ApprovalRule, responses=ERROR_RESPONSES(401, 403, 422))
async def add_rule(body: NewRule, store: RulesDep, caller: Approver) -> ApprovalRule:
    """Save a rule (422 naming each problem; 403 naming the rule of ownership that refuses it).
    `created_by` is the key's principal, or with keys off the name given (else `anonymous`)."""
    found = problems(body)
    if found:
        raise HTTPException(422, "; ".join(found))
    who = recorded_name(caller, body.created_by)
    refused = refusal_to_save(caller, who, body)
    if refused:
        raise HTTPException(403, refused)
    return await asyncio.to_thread(store.add, body.model_copy(update={"created_by": who}))


@router.post(  # not under /rules/: a DELETE there would be taken for a rule's id
    "/rule-offers", response_model=RuleOffer, responses=ERROR_RESPONSES(401, 403, 422)
)
async def offer_rule(body: RuleOfferRequest, caller: Viewer) -> RuleOffer:
    """What "allow always" would save for this call: its match and the one line a person may edit;
    with `line`, the match that edit makes (422 saying what is wrong with it). Saves nothing."""
    try:
        offered = offers.offer(body.tool, body.arguments)
    except ValueError as err:
        raise HTTPException(422, f"arguments: {err}") from None
    if body.line is None:
        return RuleOffer(tool=body.tool, match=offered.match, label=offered.label, line=offered.line)
    try:
        match = offers.edited(offered, body.line)
    except ValueError as err:
        raise HTTPException(422, f"line: {err}") from None
    return RuleOffer(tool=body.tool, match=match, label=offered.label, line=body.line.strip())


@router.delete("/rules/{rule_id}", response_model=ApprovalRule, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def delete_rule(
    rule_id: RuleId, store: RulesDep, caller: Approver, principal: Principal = None
) -> ApprovalRule:
    """Delete a rule (its maker, or an admin); the next call is decided without it. It is kept as a
    tombstone (`deleted_by`, `deleted_at`, answered here) and its id never comes back; deleting it
    again is 404 saying who deleted it and when."""
    who = recorded_name(caller, principal)
    try:
        rule = await _reachable(store, caller, rule_id)
        refused = refusal_to_delete(caller, who, rule)
        if refused:
            raise HTTPException(403, refused)
        return await asyncio.to_thread(store.remove, rule_id, who)
    except RuleNotFound as err:
        raise HTTPException(404, str(err)) from None


def recorded_name(caller: Caller, given: str | None) -> str:
    """Who the caller is, for the record: the key's principal with keys on (a name given is
    ignored), else the name given, else `anonymous`."""
    if caller.principal is not None:
        return person(caller.principal)
    return person((given or "").strip() or ANONYMOUS)


def refusal_to_save(caller: Caller, who: str, rule: NewRule) -> str | None:
    """Why `caller` (recorded as `who`) may not save `rule`, naming the rule that refuses; None: it may."""
    if caller.projects is not None and (refused := _scope_refusal(caller, who, rule)):
        return refused
    if caller.role >= Role.admin:
        return None
    if caller.role < Role.approver:
        return f"{who} has role {caller.role.name}; saving or deleting a rule needs approver or higher"
    if rule.scope == RuleScope.GLOBAL:
        return (
            f"{who} has role {caller.role.name}; a global rule needs admin (an approver may save rules "
            "of a project they approve in, or user rules for themselves)"
        )
    if rule.scope == RuleScope.USER and rule.user != who:
        return f"{who} may save user rules only for {who} ({rule.user}'s need an admin)"
    return None


def in_reach(caller: Caller, rule: NewRule) -> bool:
    """Whether `caller` sees `rule`: an unscoped key every rule; a scoped one the rules of its
    projects, its own user rules and the global ones."""
    if caller.projects is None or rule.scope == RuleScope.GLOBAL:
        return True
    if rule.scope == RuleScope.USER:
        return caller.principal is not None and rule.user == caller.principal
    return caller.may_act_in(rule.project)


async def _reachable(store: RuleStore, caller: Caller, rule_id: str) -> ApprovalRule:
    """The rule, when `caller` may see it (a deleted one: its `RuleDeleted`); else `RuleNotFound` in
    the words of a rule that never existed."""
    missing = RuleNotFound(f"no rule {rule_id!r}; GET /rules lists them")
    try:
        rule = await asyncio.to_thread(store.get, rule_id)
    except RuleDeleted as err:
        raise (err if in_reach(caller, err.rule) else missing) from None
    if not in_reach(caller, rule):
        raise missing
    return rule


def _scope_refusal(caller: Caller, who: str, rule: NewRule) -> str | None:
    """What a key scoped to projects may not change, whatever its role: global rules (they apply
    to every project), other people's user rules, rules of other projects."""
    projects = ", ".join(sorted(caller.projects or ()))
    if rule.scope == RuleScope.GLOBAL:
        return (
            f"the key of {who} is scoped to projects ({projects}); a global rule applies to every "
            "project, so it needs an admin without projects"
        )
    if rule.scope == RuleScope.USER and not in_reach(caller, rule):
        return f"the key of {who} is scoped to projects ({projects}); it may save user rules only for {who}"
    if rule.scope == RuleScope.PROJECT and not caller.may_act_in(rule.project):
        return (
            f"{who} may not act in project {rule.project!r} (the key's projects: {projects}); "
            "a project rule needs one of that project's approvers or an admin without projects"
        )
    return None


def refusal_to_delete(caller: Caller, who: str, rule: ApprovalRule) -> str | None:
    """Why `caller` (recorded as `who`) may not delete `rule`: only its maker, who may still make
    it, or an admin; None: it may."""
    if caller.role >= Role.admin:
        return _scope_refusal(caller, who, rule) if caller.projects is not None else None
    if rule.created_by != who:
        return (
            f"{who} may delete only the rules {who} made; {rule.rule_id} was made by "
            f"{rule.created_by or ANONYMOUS} (an admin may delete any)"
        )
    refused = refusal_to_save(caller, who, rule)
    return f"{who} made {rule.rule_id} but may not delete it now: {refused}" if refused else None
