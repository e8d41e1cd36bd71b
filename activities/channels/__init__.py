"""Outbound chat channels: one package per channel (`lark/`); inbound endpoints live in `api/`."""
