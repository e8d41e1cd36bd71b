"""A decision on a request, typed: who took it, with what role, through which door, and what they said.

Every door (HTTP, a card click, a chat reply, a decision relayed from a session to its graph, an
approval rule, a grant, a timeout) makes one `Decision`; one function in the workflow takes it
(`workflows/supervision/authority.py`), checking the role, the request's approvers, the two-person
rule and the policy floor alike for every door, and records who acted and through which channel.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool

from .access import Role
from .base import Contract
from .grants import GrantScope
from .principals import PersonId
from .sandbox import SandboxProfile


class DecisionSource(StrEnum):
    """The door a decision came through."""

    HTTP = "http"
    """`POST /sessions/{key}/interactions/{id}` or its graph twin (the console and the REPL too)."""
    CLICK = "click"
    """A button on a chat's approval card."""
    CHAT = "chat"
    """A chat message read as the answer (`确认`, `yes`, ...; a question's answer)."""
    RELAY = "relay"
    """A person's decision a session took in and handed to the graph (or task run) that asked."""
    RULE = "rule"
    """An approval rule that allows or denies such calls."""
    GRANT = "grant"
    """A grant an approver gave for such calls."""
    TIMEOUT = "timeout"
    """Nobody decided in time: a denial."""
    SYSTEM = "system"
    """The run was cancelled, or the request withdrawn (its task was rolled back): a denial."""


PERSON_SOURCES = (DecisionSource.HTTP, DecisionSource.CLICK, DecisionSource.CHAT, DecisionSource.RELAY)
"""Doors through which a person decides: the role, the approvers and the two-person rule apply."""


class Verdict(Contract):
    """Yes or no, and with a yes to a tool call: edited arguments, a grant, a sandbox."""

    kind: Literal["verdict"] = Field(default="verdict", description="A verdict.")
    approved: StrictBool = Field(description="True to approve, false to deny (or decline a question).")
    edit: dict[str, Any] | None = Field(
        default=None, description="Run the call with these arguments instead (approving a tool call)."
    )
    grant: GrantScope | None = Field(
        default=None, description="Also allow later matching calls for the rest of the session."
    )
    sandbox: SandboxProfile | None = Field(default=None, description="Where the approved call runs.")


class Answer(Contract):
    """The answer to a question."""

    kind: Literal["answer"] = Field(default="answer", description="An answer.")
    text: str = Field(min_length=1, description="The answer, as the person wrote it.")


Said = Annotated[Verdict | Answer, Field(discriminator="kind")]
"""What a decision says: a verdict or an answer, by `kind`."""


class Decision(Contract):
    """One decision on one request, from any door (the `decide_checked` update and its signal twin `decide`)."""

    interaction_id: str = Field(min_length=1, description="The request decided.")
    principal: PersonId = Field(
        min_length=1, description="Who decided (a key's principal, a chat user, `rule:<id>`)."
    )
    role: Role | None = Field(
        default=None,
        description="Their role: an API key's, or a chat user's by the channel's approver settings. None "
        "only for a decision no person took (a rule, a grant, a timeout); a person's without one is refused.",
    )
    channel: str = Field(
        min_length=1, description="Where it came from: http, ag-ui, lark, dingtalk, cli, system, ..."
    )
    source: DecisionSource = Field(description="The door it came through.")
    said: Said = Field(description="The verdict, or the answer to a question.")
    comment: str | None = Field(default=None, description="Why; a denial's comment is passed to the agent.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Door extras: the chat message or card it came from."
    )
    refused: str | None = Field(
        default=None,
        description="Set by a door that was refused this decision (`decide_checked` refused it, or the API "
        "before any workflow): the `decide` signal only records the refusal; such a decision never takes "
        "effect, even should it pass the check by now.",
    )
