"""`settings.lark`: the Lark/Feishu channel."""

from __future__ import annotations

from pydantic import Field

from contracts import person

from .group import Group, env


class LarkSettings(Group):
    """The Lark/Feishu channel; on when `app_id` is set."""

    app_id: str | None = Field(
        default=None,
        validation_alias=env("app_id", "LARK_APP_ID", "SYNAPSE_LARK_APP_ID"),
        description="Lark/Feishu app id; the Lark channel is on when it is set.",
    )
    app_secret: str | None = Field(
        default=None,
        validation_alias=env("app_secret", "LARK_APP_SECRET", "SYNAPSE_LARK_APP_SECRET"),
        description="App secret.",
    )
    verification_token: str | None = Field(
        default=None,
        validation_alias=env(
            "verification_token", "LARK_VERIFICATION_TOKEN", "SYNAPSE_LARK_VERIFICATION_TOKEN"
        ),
        description="Event subscription verification token.",
    )
    encrypt_key: str | None = Field(
        default=None,
        validation_alias=env("encrypt_key", "LARK_ENCRYPT_KEY", "SYNAPSE_LARK_ENCRYPT_KEY"),
        description="Event encrypt key (payload encryption and request signatures).",
    )
    domain: str = Field(
        default="https://open.feishu.cn",
        validation_alias=env("domain", "LARK_DOMAIN", "SYNAPSE_LARK_DOMAIN"),
        description="Open API base URL: Feishu, Lark international (https://open.larksuite.com), or any URL.",
    )
    admins: str = Field(
        default="",
        validation_alias=env("admins", "LARK_ADMINS", "SYNAPSE_LARK_ADMINS"),
        description="Comma-separated open_ids who may approve any request in Lark chats.",
    )
    requesters_decide: bool = Field(
        default=True,
        validation_alias=env("requesters_decide", "LARK_REQUESTERS_DECIDE", "SYNAPSE_LARK_REQUESTERS_DECIDE"),
        description="Whether a chat member may decide the requests their own messages led to (seed 001's "
        "chats); false: only `admins` decide in Lark chats (every other member can still talk to the agent).",
    )
    bot_open_id: str | None = Field(
        default=None,
        validation_alias=env("bot_open_id", "LARK_BOT_OPEN_ID", "SYNAPSE_LARK_BOT_OPEN_ID"),
        description="The bot's open_id: in groups only mentions of it count (any mention when unset).",
    )
    mode: str = Field(
        default="webhook",
        validation_alias=env("mode", "LARK_MODE", "SYNAPSE_LARK_MODE"),
        description="`webhook` (events POSTed to /channels/lark/events) or `websocket` (the SDK's long connection).",
    )

    @property
    def enabled(self) -> bool:
        """The Lark channel is on when an app id is configured."""
        return bool(self.app_id)

    @property
    def admin_ids(self) -> list[str]:
        """`admins` as a list of open_ids, each in its one spelling (`lark:ou_1` is `ou_1`)."""
        return [person(item.strip()) for item in self.admins.split(",") if item.strip()]
