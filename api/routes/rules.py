"""Approval rules: lasting allow / ask / deny decisions about kinds of tool calls, for every channel.

Anyone may read them, and ask what "allow always" would save for a call (`POST /rule-offers`, the
console's button; the REPL works it out itself with the same `activities.rules.offers`). An
approver may save or delete a rule of a project or a person (the REPL's "allow always in this
project"); a global rule, which every session obeys, needs an admin. The
workers read the same store at every assessment: a rule saved now decides the next call.
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

router = APIRouter(tags=["rules"])

RuleId = Annotated[str, Path(pattern=r"^rule_[0-9]+$", description="The rule, e.g. `rule_3`.")]


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


@router.post("/rules", status_code=201, response_model=ApprovalRule, responses=ERROR_RESPONSES(401, 403, 422))
async def add_rule(body: NewRule, store: RulesDep, caller: Approver) -> ApprovalRule:
    """Save a rule (422 naming each problem). A global rule needs an admin; `created_by` is the caller."""
    _may_change(caller, body.scope)
    found = problems(body)
    if found:
        raise HTTPException(422, "; ".join(found))
    rule = body.model_copy(update={"created_by": caller.principal or body.created_by or "anonymous"})
    return await asyncio.to_thread(store.add, rule)


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
async def delete_rule(rule_id: RuleId, store: RulesDep, caller: Approver) -> ApprovalRule:
    """Delete a rule; the next call is decided without it. A global rule needs an admin."""
    try:
        rule = await asyncio.to_thread(store.get, rule_id)
        _may_change(caller, rule.scope)
        return await asyncio.to_thread(store.remove, rule_id)
    except RuleNotFound as err:
        raise HTTPException(404, str(err)) from None


def _may_change(caller: Caller, scope: RuleScope) -> None:
    if scope == RuleScope.GLOBAL and caller.role < Role.admin:
        raise HTTPException(
            403,
            f"{caller.principal} has role {caller.role.name}; a global rule needs admin "
            "(an approver may save rules of scope project or user)",
        )
