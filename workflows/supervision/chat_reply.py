"""A chat message read as the decision on the request it answers: the one interpreter of chat text.

While a request waits, the next message of its chat answers it instead of reaching the agent
(seed 001). `to_decision` makes that message a `Decision` like any other door's:
- a question's answer is the whole text;
- anything else is read strictly (`interpret`): normalised first (NFKC, so full-width and
  styled letters are plain; zero-width, format and other invisible characters removed; @mentions
  dropped; case folded), it approves only when the whole reply, less punctuation and spaces, is
  one phrase of `CONFIRM`; every other reply denies: a cancel phrase or a negation (`不`, `别`,
  `no`, `not`, `don't`, `never`, ...) because it says no, anything else because it is ambiguous
  (seed 001: "ambiguous cancels, for safety"), and then the chat is told which words count.
The only confirm phrase holding a negation character is `没问题` ("no problem"); it approves as a
whole reply, never inside a longer one. A negation counts wherever it stands, inside what looks
like a mention too (`好的 @bot不行`: without spaces, where a name ends cannot be told).
What is not read away keeps a reply from being a plain phrase: a question mark (`ok?` asks), a
combining mark (`c̶o̶n̶f̶i̶r̶m̶` is struck through, `ye̸s` crossed out), a symbol or emoji
(`yes ❌`, `🚫 approve`, `ok 🙄`, `> yes` quotes someone), tildes before the end (`~~yes~~` is
struck through in Markdown); only a few plainly approving emoji (`👍` `👌` `✅` ...) and trailing
tildes (`好的~`) are read away. Look-alike letters of other scripts (Cyrillic `уеs`) are not
folded: such a reply is ambiguous.

Pure and deterministic, so it runs inside workflow code. Changing the tables changes how replays
read recorded messages: a change after 1.0 goes behind `versioning.patched`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts import (
        Answer,
        Decision,
        DecisionSource,
        InboundMessage,
        InteractionRequest,
        InteractionType,
        Verdict,
    )

CONFIRM = frozenset(
    {
        # Chinese
        "确认",
        "确定",
        "同意",
        "批准",
        "执行",
        "可以",
        "好",
        "好的",
        "行",
        "没问题",
        "是",
        "是的",
        "确认执行",
        "同意执行",
        "批准执行",
        "可以执行",
        # Traditional script (not `沒問題`: `没问题` stays the one phrase holding a negation)
        "確認",
        "確定",
        "執行",
        "確認執行",
        "同意執行",
        "批准執行",
        "可以執行",
        # English (spaces removed: "go ahead" is "goahead")
        "yes",
        "y",
        "yeah",
        "yep",
        "ok",
        "okay",
        "approve",
        "approved",
        "confirm",
        "confirmed",
        "lgtm",
        "sure",
        "goahead",
        "proceed",
        "doit",
        "yesplease",
    }
)
"""Whole replies that approve (compared without punctuation, spaces or case)."""

CANCEL = frozenset(
    {"取消", "拒绝", "否决", "算了", "cancel", "deny", "denied", "reject", "rejected", "stop", "abort"}
)
"""Replies that deny by saying so (any reply that does not approve denies; these say it plainly)."""

NEGATION_ZH = "不别勿没莫否沒別未"
"""Chinese characters of negation (both scripts): a reply holding one never approves (but
`没问题`, whole)."""
NEGATION_EN = frozenset(
    {"no", "n", "nope", "not", "never", "cannot", "nor", "neither", "nothing", "none"}
    | {f"{stem}nt" for stem in ("do", "does", "did", "ca", "wo", "is", "are", "was", "were", "ai")}
    | {f"{stem}nt" for stem in ("could", "should", "would", "has", "have", "had", "must", "need")}
)
"""English words of negation, compared without apostrophes (`don't` is `dont`)."""
_APOSTROPHES = "'’‘ʼ`"
_NOT_SUFFIX = re.compile(f"n[{_APOSTROPHES}]t$")
"""Any other `n't` contraction."""
_MENTION = re.compile(r"@\S+")
_WORD = re.compile(f"[a-z]+(?:[{_APOSTROPHES}][a-z]+)?")
_INVISIBLE = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
    | set(range(0x180B, 0x1810))
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)
"""Default-ignorable code points that are not format characters (`Cf`): the combining grapheme
joiner, Hangul fillers, variation selectors (`👍️` is `👍` and U+FE0F)."""
_QUESTION = frozenset("?¿‽⸮؟")
"""Kept by `compact`: a reply that asks (`ok?`, `确认？`) does not approve."""
_PLAIN_SYMBOLS = frozenset("👍👌✅✔☑🆗😊🙏") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
"""The only symbols `compact` reads away: plainly approving emoji and their skin tones."""

WORDS_THAT_COUNT = "确认 / 同意 / 可以 / 好的 / yes / ok / approve"
"""Named to a chat whose reply was not read as an approval."""

Reading = Literal["approve", "deny", "ambiguous"]


@dataclass(frozen=True)
class Read:
    """How a reply reads: `approve`, `deny` (it says no) or `ambiguous` (which denies too)."""

    reading: Reading

    @property
    def approved(self) -> bool:
        """Only `approve` approves."""
        return self.reading == "approve"


def _visible(text: str) -> str:
    """NFKC, without format or other invisible characters, case-folded."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(
        char for char in text if unicodedata.category(char) != "Cf" and ord(char) not in _INVISIBLE
    )
    return text.casefold()


def normalize(text: str) -> str:
    """NFKC (full-width letters become plain ones), without format characters (zero-width spaces,
    joiners, direction marks) or other invisible ones, without @mentions, case-folded, trimmed."""
    return _MENTION.sub(" ", _visible(text)).strip()


def _read_away(char: str) -> bool:
    """Whether `compact` drops `char`: punctuation but a question mark, spaces, control characters
    and `_PLAIN_SYMBOLS`; never a letter, digit, combining mark or other symbol."""
    if char in _QUESTION:
        return False
    category = unicodedata.category(char)
    return category[0] in "PZ" or category == "Cc" or char in _PLAIN_SYMBOLS


def compact(text: str) -> str:
    """A normalised reply without punctuation, spaces, trailing tildes or plainly approving emoji:
    what is compared with `CONFIRM`. Question marks, combining marks and other symbols stay."""
    plain = normalize(text)
    end = len(plain)
    while end and (plain[end - 1] == "~" or _read_away(plain[end - 1])):
        end -= 1
    return "".join(char for char in plain[:end] if not _read_away(char))


def negated(text: str) -> bool:
    """Whether the reply holds a negation (a cancel phrase, `不`, `no`, `not`, `don't`, `can't`, ...)."""
    plain = _visible(text)  # with mentions: `@bot不行` says no
    if any(phrase in plain for phrase in CANCEL):
        return True
    if any(char in plain.replace("没问题", "") for char in NEGATION_ZH):
        return True
    found = _WORD.findall(plain)
    words = {"".join(char for char in word if char not in _APOSTROPHES) for word in found}
    return bool(words & NEGATION_EN) or any(_NOT_SUFFIX.search(word) for word in found)


def interpret(text: str) -> Read:
    """Read a reply to a tool approval or a gate: a negation denies wherever it stands; else approve
    only on a whole confirm phrase."""
    if negated(text):
        return Read("deny")
    return Read("approve" if compact(text) in CONFIRM else "ambiguous")


def comment_of(text: str, read: Read) -> str:
    """The decision's comment: the reply itself, or why it did not approve."""
    if read.reading == "ambiguous":
        return (
            f"ambiguous reply {text.strip()!r} counts as a denial; to approve, reply with only one of "
            f"{WORDS_THAT_COUNT}"
        )
    return text.strip()


def to_decision(message: InboundMessage, request: InteractionRequest) -> Decision:
    """The decision a chat message makes on `request`: a question's answer (the whole text), else a
    verdict read by `interpret`; by the sender, with their role, through their channel."""
    said: Verdict | Answer
    if request.interaction_type == InteractionType.USER_INPUT:
        said, comment = Answer(text=message.content.strip() or message.content), None
    else:
        read = interpret(message.content)
        said, comment = Verdict(approved=read.approved), comment_of(message.content, read)
    return Decision(
        interaction_id=request.interaction_id,
        principal=message.sender_id,
        role=message.role,
        channel=message.channel,
        source=DecisionSource.CHAT,
        said=said,
        comment=comment,
        metadata={"message_id": message.message_id} if message.message_id else {},
    )
