"""What a chat channel is to the API: the one interface Lark and DingTalk each implement.

A channel (`api/lark/channel.py`, `api/dingtalk/channel.py`) reads its platform's messages and
card clicks, says who a user is (the principal a workflow sees, in its one spelling: a
`contracts.PersonId`, which every model holding a principal applies too; the workflow compares
principals as given) and with which settings (its admins, whether requesters
decide), and answers in its chats through its outbound half (`activities/channels/<name>/`,
which the session's `deliver_message` activity uses to send answers, cards and card updates).
`Conversations` and the channel's inbound wiring use only this interface: a click is read by the
channel, decided as its clicker (`Conversations.decider`, `api/chat/clicks.decide`) and answered
by the channel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from contracts import person

from .clicks import Click, ClickAnswer
from .conversations import Found

M_contra = TypeVar("M_contra", contravariant=True)
"""The platform's message, as its SDK or endpoint gives it."""
C_contra = TypeVar("C_contra", contravariant=True)
"""The platform's card callback."""
R_co = TypeVar("R_co", covariant=True)
"""What a click that decides nothing is answered with (a toast, a reason)."""
A_co = TypeVar("A_co", covariant=True)
"""What a click that was decided on is answered with (a toast and the card redrawn; nothing)."""


@dataclass(frozen=True)
class ChatPeople:
    """Who decides in a channel's chats (its settings)."""

    admins: list[str]
    """The channel's admins (`LARK_ADMINS`, `DINGTALK_ADMINS`): approvers of every session of it."""
    requesters_decide: bool
    """Whether a member decides the requests their own messages led to."""


class ChatChannel(Protocol[M_contra, C_contra, R_co, A_co]):
    """One chat platform, inbound and its replies."""

    @property
    def name(self) -> str:
        """The channel's name: its session keys' prefix and its messages' `channel`."""
        ...

    @property
    def people(self) -> ChatPeople:
        """Who decides in its chats."""
        ...

    def principal(self, user_id: str) -> str:
        """The principal of a chat user (their one spelling, `contracts.principals`)."""
        ...

    def read_message(self, raw: M_contra) -> Found:
        """What an incoming message means: a text for a session, unsupported, or ignored."""
        ...

    def read_click(self, raw: C_contra) -> Click | R_co:
        """A card click's decision, or what to answer when it decides nothing."""
        ...

    async def answer_click(self, click: Click, answer: ClickAnswer, why: str) -> A_co:
        """Tell the clicker how their click went (`api/chat/clicks.decide`'s answer), as the platform
        shows it (`why` names the answer, for dedupe and logs)."""
        ...

    async def reply(self, chat_id: str, reply_to: str | None, text: str, why: str) -> None:
        """Answer in a chat (a courtesy: never raised; `why` names it, for dedupe and logs)."""
        ...


class ChannelBasics:
    """What every channel answers alike: its name, who decides in it, and a user's principal (their
    one spelling, `contracts.principals`)."""

    def __init__(self, name: str, people: ChatPeople) -> None:
        self._name = name
        self._people = people

    @property
    def name(self) -> str:
        """The channel's name."""
        return self._name

    @property
    def people(self) -> ChatPeople:
        """Who decides in its chats."""
        return self._people

    def principal(self, user_id: str) -> str:
        """The principal of a chat user."""
        return person(user_id)
