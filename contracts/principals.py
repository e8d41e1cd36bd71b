"""Who a principal is, spelled one way wherever a contract holds one.

A Lark user may be named with the channel's prefix (`lark:ou_1`, as policies, settings and HTTP
callers often write an open_id) or bare (`ou_1`, as the chat itself gives them): one person, whose
one spelling is the bare id. Every contract field that names a person is a `PersonId`, so a model
built at any door, and every model a workflow reads from its history, spells the person that one
way: the two-person rule, an approvers check and a rule's maker compare principals as given.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

SAME_PERSON_PREFIXES = ("lark:",)
"""Prefixes that name the same person as the bare id after them."""


def person(principal: str) -> str:
    """The one spelling of `principal`: a Lark open_id with or without its `lark:` prefix is `ou_…`
    (a bare prefix names nobody else and stays as given)."""
    for prefix in SAME_PERSON_PREFIXES:
        if principal.startswith(prefix) and len(principal) > len(prefix):
            return principal.removeprefix(prefix)
    return principal


PersonId = Annotated[str, AfterValidator(person)]
"""A principal in its one spelling (`person`): every contract field that names a person is one."""
