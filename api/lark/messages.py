"""Reading Lark `im.message.receive_v1` events: which session a message is for, and its text.

Rules:
- Session key: `lark:<chat_id>`; a message inside a thread (topic groups, or a reply thread in a
  normal group; the event carries `thread_id`) goes to `lark:<chat_id>:<thread_id>`, so every
  topic is its own conversation.
- p2p chats: every message counts. Group chats: only messages that mention the bot. The bot is
  recognised by its open_id when it is known (`bot_open_id`); when it is not, any mention
  counts (a bot only receives group messages that @-mention someone if it has the
  "read all group messages" permission, which Synapse does not need).
- The bot's `@_user_N` placeholders are removed from the text; other people's placeholders
  become `@<name>` so the agent reads who was meant.
- Only `text` messages reach a session; other types get a polite reply (`api/chat/conversations.py`).
  Messages sent by apps/bots are ignored, so two bots never talk to each other in a loop.
"""

from __future__ import annotations

import json
import re

from lark_oapi.api.im.v1 import MentionEvent, P2ImMessageReceiveV1

from contracts import LARK, ChannelRef, InboundMessage
from contracts.session import SESSION_KEY_PATTERN

from ..chat.conversations import ChatText, Ignored, Unsupported

CHANNEL = LARK.name


def session_key_for(chat_id: str, thread_id: str | None = None) -> str:
    """Session key of a Lark chat, or of one thread in it."""
    return f"{CHANNEL}:{chat_id}:{thread_id}" if thread_id else f"{CHANNEL}:{chat_id}"


def _is_bot(mention: MentionEvent, bot_open_id: str | None) -> bool:
    return bot_open_id is None or (mention.id is not None and mention.id.open_id == bot_open_id)


def _text_of(content: str | None) -> str:
    try:
        parsed = json.loads(content or "")
    except ValueError:
        return ""
    text = parsed.get("text") if isinstance(parsed, dict) else None
    return text if isinstance(text, str) else ""


def strip_mentions(text: str, mentions: list[MentionEvent], bot_open_id: str | None) -> str:
    """Remove the bot's mention placeholders; name everybody else's."""
    # Longest keys first: `@_user_1` is a prefix of `@_user_10`.
    for mention in sorted(mentions, key=lambda m: len(m.key or ""), reverse=True):
        if not mention.key:
            continue
        if _is_bot(mention, bot_open_id):
            text = re.sub(re.escape(mention.key) + r" ?", "", text)
        else:
            text = text.replace(mention.key, f"@{mention.name or 'someone'}")
    return text.strip()


def read_message(data: P2ImMessageReceiveV1, bot_open_id: str | None) -> ChatText | Unsupported | Ignored:
    """Decide what an incoming message means for Synapse."""
    event = data.event
    message = event.message if event else None
    sender = event.sender if event else None
    if message is None or sender is None or not message.chat_id or not message.message_id:
        return Ignored("the event has no message, sender or chat")
    if sender.sender_type != "user":
        return Ignored(f"sent by a {sender.sender_type or 'non-user'}, not a person")
    open_id = sender.sender_id.open_id if sender.sender_id else None
    if not open_id:
        return Ignored("the sender has no open_id")
    mentions = message.mentions or []
    if message.chat_type != "p2p" and not any(_is_bot(m, bot_open_id) for m in mentions):
        return Ignored(f"a {message.chat_type} message that does not mention the bot")
    if message.message_type != "text":
        return Unsupported(message.chat_id, message.message_id, message.message_type or "unknown")
    text = strip_mentions(_text_of(message.content), mentions, bot_open_id)
    if not text:
        return Ignored("no text besides the mention")
    key = session_key_for(message.chat_id, message.thread_id)
    if not re.fullmatch(SESSION_KEY_PATTERN, key):
        return Ignored(f"chat/thread ids give an invalid session key {key!r}")
    metadata = {
        "event_id": data.header.event_id if data.header else None,
        "chat_type": message.chat_type,
    }
    if message.thread_id:
        metadata["thread_id"] = message.thread_id
    inbound = InboundMessage(
        channel=CHANNEL,
        sender_id=open_id,
        chat_id=message.chat_id,
        content=text,
        message_id=message.message_id,
        metadata=metadata,
        origin=ChannelRef(channel=CHANNEL, chat_id=message.chat_id, reply_to=message.message_id),
    )
    return ChatText(session_key=key, chat_id=message.chat_id, message=inbound)
