"""A chat user's role, by the channel's approver settings (chats have no API keys).

- An admin of the channel (`LARK_ADMINS`, `DINGTALK_ADMINS`) is an approver: they may decide any
  request of the channel's sessions (within each request's approvers, which name them).
- Every other member is an approver too while the channel lets requesters decide the requests
  their own messages led to (`LARK_REQUESTERS_DECIDE`, on by default, as seed 001's chats): each
  request's approvers then name its requester beside the admins, so a member decides only their
  own requests. With it off they are operators: they talk to the agent and decide nothing.
The role travels with every chat message and card click to the workflow, whose one check
(`workflows/supervision/checks.py`) refuses a decision below approver.
"""

from __future__ import annotations

from collections.abc import Collection

from contracts import Role


def chat_role(user_id: str, admins: Collection[str], *, requesters_decide: bool) -> Role:
    """The role of chat user `user_id` (a Lark open_id, a DingTalk userId)."""
    if user_id in admins or requesters_decide:
        return Role.approver
    return Role.operator
