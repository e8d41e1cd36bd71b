"""DingTalk (钉钉), inbound: the Stream connection (`stream`), the webhook check (`webhook`), what bot
messages and card clicks mean (`messages`, `clicks`), the channel tying them to sessions
(`inbound`) and its mounting (`routes`).

Imported only when the channel is on (DINGTALK_CLIENT_ID set)."""
