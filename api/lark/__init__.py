"""Lark/Feishu, inbound: the webhook and card-callback endpoints (`routes`), request checks (`webhook`),
what events mean (`messages`, `clicks`) and the SDK dispatcher that ties them together (`inbound`).

Imported only when the channel is on: lark-oapi takes seconds to import."""
