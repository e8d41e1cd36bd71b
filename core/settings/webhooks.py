"""`settings.webhooks`: notifications of interactions POSTed to a session's `notify_url`."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..outbound import OutboundPolicy
from .group import Group, env


class WebhookSettings(Group):
    """Notifications of interactions POSTed to a session's `notify_url`."""

    secret: str | None = Field(
        default=None,
        validation_alias=env("secret", "SYNAPSE_WEBHOOK_SECRET"),
        description="Key of the HMAC-SHA256 signature every notification carries; sessions may name "
        "a `notify_url` only when it is set.",
    )
    timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=env("timeout_seconds", "SYNAPSE_WEBHOOK_TIMEOUT_SECONDS"),
        description="How long one POST may take before it is retried.",
    )
    allow: str | None = Field(
        default=None,
        validation_alias=env("allow", "SYNAPSE_WEBHOOK_ALLOW"),
        description="Hosts or CIDRs (comma-separated, e.g. `hooks.internal,10.1.0.0/16`) a `notify_url` "
        "may reach although they are loopback, private, link-local or reserved: the one way to allow an "
        "internal receiver. Set it on the API and the workers.",
    )

    @field_validator("allow")
    @classmethod
    def _allow_parses(cls, value: str | None) -> str | None:
        OutboundPolicy.from_setting(value)  # a bad entry is an error at start, naming it
        return value

    @property
    def policy(self) -> OutboundPolicy:
        """Where notifications may go: public addresses and what `allow` names."""
        return OutboundPolicy.from_setting(self.allow)
