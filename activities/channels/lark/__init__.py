"""Lark/Feishu, outbound: the `deliver_message` activity (`delivery`) and message cards (`cards`)."""
