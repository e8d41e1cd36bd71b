"""Reading a chat reply as a decision on a pending confirmation.

While an interaction is pending, the next message of its chat answers it instead of
reaching the agent. Confirm and cancel keywords are matched in Chinese and English;
anything else, or a message with both kinds, is ambiguous and counts as a denial (safe).
Pure and deterministic, so it runs inside workflow code. Changing the keyword sets changes
how replays interpret recorded signals: gate such a change behind `versioning.patched()`.
"""

from __future__ import annotations

import re
from typing import Literal

CONFIRM_WORDS = frozenset({"confirm", "yes", "y", "ok", "okay", "approve", "approved"})
CANCEL_WORDS = frozenset({"cancel", "no", "n", "deny", "denied", "reject"})
CONFIRM_ZH = ("确认", "批准", "执行")
CANCEL_ZH = ("取消", "拒绝", "不")

Reply = Literal["approve", "deny", "ambiguous"]

_WORD = re.compile(r"[a-z]+")


def interpret_reply(text: str) -> Reply:
    """Classify a chat reply: `approve`, `deny`, or `ambiguous` (which is treated as deny).

    English keywords must be whole words ("no" in "not now" does not count; "y" in "deny"
    does not either); Chinese keywords match anywhere, since Chinese has no spaces.
    """
    normalized = text.strip().lower()
    words = set(_WORD.findall(normalized))
    confirm = bool(words & CONFIRM_WORDS) or any(k in normalized for k in CONFIRM_ZH)
    cancel = bool(words & CANCEL_WORDS) or any(k in normalized for k in CANCEL_ZH)
    if confirm and not cancel:
        return "approve"
    if cancel and not confirm:
        return "deny"
    return "ambiguous"
