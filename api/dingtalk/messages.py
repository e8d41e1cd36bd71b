"""Reading DingTalk bot messages (Stream topic `/v1.0/im/bot/messages/get`, or the webhook's body).

Parsed by the SDK's own `ChatbotMessage.from_dict`. Rules:
- Session key: `dingtalk:<conversationId>`, the id written URL-safe (`+` → `-`, `/` → `_`, no
  `=`: session keys hold letters, digits and `_.:@-`); the chat it answers in is the
  conversation itself for a group, `user:<userId>` for a one-on-one chat (robot messages to one
  person are addressed by userId).
- One-on-one chats (`conversationType` "1"): every message counts. Groups ("2"): only messages
  that @mention the bot (`isInAtList`).
- The sender is the principal by their userId (`senderStaffId`), the id `DINGTALK_ADMINS` and
  approval cards use; `senderId` when DingTalk gives no staff id (someone outside the org).
- Only `text` messages reach a session; other types get a polite reply.
"""

from __future__ import annotations

import re
from typing import Any

from dingtalk_stream import ChatbotMessage

from activities.channels.dingtalk.cards import USER_PREFIX
from contracts import DINGTALK, ChannelRef, InboundMessage
from contracts.session import SESSION_KEY_PATTERN

from ..chat.conversations import ChatText, Found, Ignored, Unsupported

CHANNEL = DINGTALK.name
ONE_ON_ONE = "1"


def session_key_for(conversation_id: str) -> str:
    """Session key of a DingTalk conversation."""
    return f"{CHANNEL}:{conversation_id.replace('+', '-').replace('/', '_').rstrip('=')}"


def read_message(data: dict[str, Any]) -> Found:
    """Decide what an incoming bot message means for Synapse."""
    try:
        message = ChatbotMessage.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        return Ignored(f"not a bot message DingTalk sends ({type(err).__name__}: {err})")
    conversation = message.conversation_id
    sender = message.sender_staff_id or message.sender_id
    if not isinstance(conversation, str) or not conversation or not isinstance(sender, str) or not sender:
        return Ignored("the message has no conversationId or sender")
    one_on_one = message.conversation_type == ONE_ON_ONE
    chat_id = f"{USER_PREFIX}{sender}" if one_on_one else conversation
    if not one_on_one and not message.is_in_at_list:
        return Ignored("a group message that does not mention the bot")
    if message.message_type != "text":
        return Unsupported(chat_id, None, str(message.message_type or "unknown"))
    text = (message.text.content if message.text is not None else "") or ""
    text = text.strip()
    if not text:
        return Ignored("no text besides the mention")
    key = session_key_for(conversation)
    if not re.fullmatch(SESSION_KEY_PATTERN, key):
        return Ignored(f"the conversation id gives an invalid session key {key!r}")
    metadata = {
        "conversation_id": conversation,
        "conversation_type": message.conversation_type,
        "dingtalk_msg_id": message.message_id,
        "sender_nick": message.sender_nick,
    }
    inbound = InboundMessage(
        channel=CHANNEL,
        sender_id=sender,
        chat_id=chat_id,
        content=text,
        message_id=message.message_id,
        metadata=metadata,
        origin=ChannelRef(channel=CHANNEL, chat_id=chat_id),
    )
    return ChatText(session_key=key, chat_id=chat_id, message=inbound)
