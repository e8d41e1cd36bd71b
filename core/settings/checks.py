"""Checks at start of what field validators cannot see: a chat channel that is on but cannot work."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .dingtalk import DingTalkSettings

DINGTALK_MODES = ("stream", "webhook")


class ChannelConfigError(ValueError):
    """A chat channel is on but cannot work with the configured settings (names what to set)."""


def check_dingtalk(settings: DingTalkSettings) -> None:
    """Raise `ChannelConfigError`, naming the variable to set, when the DingTalk channel is on but
    cannot work."""
    if not settings.enabled:
        return
    if settings.mode not in DINGTALK_MODES:
        raise ChannelConfigError(
            f"DINGTALK_MODE is {settings.mode!r}; expected one of {', '.join(DINGTALK_MODES)}"
        )
    if not settings.client_secret:
        raise ChannelConfigError(
            "the DingTalk channel is on (DINGTALK_CLIENT_ID is set) but DINGTALK_CLIENT_SECRET is not "
            "set; copy it from the app's page in the DingTalk developer console, or unset "
            "DINGTALK_CLIENT_ID to turn the channel off"
        )
