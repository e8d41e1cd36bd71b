"""What every chat channel does with what people send: card clicks become decisions (`clicks`), chat
messages reach their session (`conversations`), redelivered events are skipped (`seen`).

The channels (`api/lark/`, `api/dingtalk/`) read their platform's events into these shapes and
draw the answers their own way."""
