"""`settings.dingtalk`: the DingTalk (钉钉) channel."""

from __future__ import annotations

from pydantic import Field

from contracts import person

from .checks import check_dingtalk
from .group import Group, env


class DingTalkSettings(Group):
    """The DingTalk (钉钉) channel; on when `client_id` is set."""

    client_id: str | None = Field(
        default=None,
        validation_alias=env("client_id", "DINGTALK_CLIENT_ID", "SYNAPSE_DINGTALK_CLIENT_ID"),
        description="The app's Client ID (AppKey); the DingTalk channel is on when it is set.",
    )
    client_secret: str | None = Field(
        default=None,
        validation_alias=env("client_secret", "DINGTALK_CLIENT_SECRET", "SYNAPSE_DINGTALK_CLIENT_SECRET"),
        description="The app's Client Secret (AppSecret); also the key of webhook signatures.",
    )
    robot_code: str | None = Field(
        default=None,
        validation_alias=env("robot_code", "DINGTALK_ROBOT_CODE", "SYNAPSE_DINGTALK_ROBOT_CODE"),
        description="The bot's robotCode; the client id when unset (as for an app's own bot).",
    )
    admins: str = Field(
        default="",
        validation_alias=env("admins", "DINGTALK_ADMINS", "SYNAPSE_DINGTALK_ADMINS"),
        description="Comma-separated userIds (staff ids) who may approve any request in DingTalk chats.",
    )
    requesters_decide: bool = Field(
        default=True,
        validation_alias=env(
            "requesters_decide", "DINGTALK_REQUESTERS_DECIDE", "SYNAPSE_DINGTALK_REQUESTERS_DECIDE"
        ),
        description="Whether a chat member may decide the requests their own messages led to; false: "
        "only `admins` decide in DingTalk chats (every other member can still talk to the agent).",
    )
    card_template_id: str | None = Field(
        default=None,
        validation_alias=env(
            "card_template_id", "DINGTALK_CARD_TEMPLATE_ID", "SYNAPSE_DINGTALK_CARD_TEMPLATE_ID"
        ),
        description="The approval card's template (built in DingTalk's card builder; docs/dingtalk.md "
        "lists its variables). Without it approval requests go as Markdown, answered with 确认/取消.",
    )
    mode: str = Field(
        default="stream",
        validation_alias=env("mode", "DINGTALK_MODE", "SYNAPSE_DINGTALK_MODE"),
        description="`stream` (the SDK's Stream connection, no public URL) or `webhook` (bot messages "
        "POSTed to /channels/dingtalk/events; card clicks still come over Stream).",
    )
    openapi_endpoint: str = Field(
        default="https://api.dingtalk.com",
        validation_alias=env("openapi_endpoint", "DINGTALK_OPENAPI_ENDPOINT"),
        description="The Open API and Stream gateway base URL (the SDK's own variable).",
    )

    @property
    def enabled(self) -> bool:
        """The DingTalk channel is on when a client id is configured."""
        return bool(self.client_id)

    @property
    def robot(self) -> str:
        """The bot's robotCode."""
        return self.robot_code or self.client_id or ""

    @property
    def admin_ids(self) -> list[str]:
        """`admins` as a list of userIds, each in its one spelling (`contracts.person`, as the channel
        spells its users)."""
        return [person(item.strip()) for item in self.admins.split(",") if item.strip()]

    def check(self) -> None:
        """Raise `ChannelConfigError`, naming the variable to set, when the channel is on but cannot work."""
        check_dingtalk(self)
