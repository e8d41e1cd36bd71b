"""Approval rules: lasting allow / ask / deny decisions about kinds of tool calls, for every channel.

Anyone may read them, and ask what "allow always" would save for a call (`POST /rule-offers`, the
console's button; the REPL works it out itself with the same `activities.rules.offers`). Rules have
owners:
- a user rule only for oneself (an admin: for anyone);
- a project rule only by that project's approvers (role approver or higher, and a key that may act
  in the project) or an admin;
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
from contracts import ApprovalRule, NewRule, RuleOffer, RuleOfferRequest, RuleScope
from core.rules.match import problems
from core.rules.profiles import PROFILES
from core.rules.store import RuleNotFound
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
    """The saved rules, oldest first (and a profile's, first, when asked for)."""
    if profile is not None and profile not in PROFILES:
        raise HTTPException(422, f"profile: {profile!r} does not exist; known: {', '.join(PROFILES)}")
    saved = await asyncio.to_thread(store.all, tool=tool, scope=scope, project=project, user=user)
    return [*(PROFILES[profile].rules if profile else ()), *saved]


@router.get("/rules/{rule_id}", response_model=ApprovalRule, responses=ERROR_RESPONSES(401, 403, 404, 422))
async def get_rule(rule_id: RuleId, store: RulesDep, caller: Viewer) -> ApprovalRule:
    """One live rule; a deleted one is 404 saying who deleted it and when."""
    try:
        return await asyncio.to_thread(store.get, rule_id)
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
        rule = await asyncio.to_thread(store.get, rule_id)
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
        return caller.principal
    return (given or "").strip() or ANONYMOUS


def refusal_to_save(caller: Caller, who: str, rule: NewRule) -> str | None:
    """Why `caller` (recorded as `who`) may not save `rule`, naming the rule that refuses; None: it may."""
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
    if rule.scope == RuleScope.PROJECT and not caller.may_act_in(rule.project):
        allowed = ", ".join(sorted(caller.projects or ()))
        return (
            f"{who} may not act in project {rule.project!r} (the key's projects: {allowed or 'none'}); "
            "a project rule needs one of that project's approvers or an admin"
        )
    return None


def refusal_to_delete(caller: Caller, who: str, rule: ApprovalRule) -> str | None:
    """Why `caller` (recorded as `who`) may not delete `rule`: only its maker, who may still make
    it, or an admin; None: it may."""
    if caller.role >= Role.admin:
        return None
    if rule.created_by != who:
        return (
            f"{who} may delete only the rules {who} made; {rule.rule_id} was made by "
            f"{rule.created_by or ANONYMOUS} (an admin may delete any)"
        )
    refused = refusal_to_save(caller, who, rule)
    return f"{who} made {rule.rule_id} but may not delete it now: {refused}" if refused else None
