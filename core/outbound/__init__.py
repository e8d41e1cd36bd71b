"""Outbound calls to URLs a caller named: the address policy, and an httpx transport that keeps it."""

from .policy import ALLOW_SETTING, OutboundPolicy, OutboundRefused, kind_of, literal_address
from .transport import GuardedTransport, guarded_client

__all__ = [
    "ALLOW_SETTING",
    "GuardedTransport",
    "OutboundPolicy",
    "OutboundRefused",
    "guarded_client",
    "kind_of",
    "literal_address",
]
