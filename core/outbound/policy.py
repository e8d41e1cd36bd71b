"""Which addresses a URL a caller named may reach: public ones, and what SYNAPSE_WEBHOOK_ALLOW names.

A caller of the API may name a URL the worker then calls (a session's `notify_url`). Unchecked,
that is a way into the deployment's own network: loopback services, the cloud's metadata endpoint
(169.254.169.254), private and link-local hosts. So an outbound call goes only to an address that
is globally routable, and not loopback, private, link-local, unique-local, multicast, reserved or
unspecified, judged on the address itself and on every IPv4 address it embeds (IPv4-mapped
`::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, 6to4 `2002::/16`, Teredo, NAT64 `64:ff9b::/96`).
A host written as a number in any form a resolver reads (`2130706433`, `0x7f.1`, `0177.0.0.1`,
`127.1`) is that address. `allow` (hosts or CIDRs) is the one way to let a call reach an
internal receiver. Names are judged by what they resolve to (`transport.GuardedTransport`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES = frozenset({"http", "https"})
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
ALLOW_SETTING = "SYNAPSE_WEBHOOK_ALLOW"


class OutboundRefused(httpx.RequestError):
    """A URL names (or resolves to) an address outbound calls may not reach, so nothing was sent;
    the message says why."""


def literal_address(host: str) -> IPAddress | None:
    """The address `host` names literally, in any form a resolver reads; None for a name.

    `::1`, `[::1]`, `fe80::1%eth0`, `127.0.0.1`, and the legacy IPv4 forms `inet_aton` reads:
    `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`; with a trailing dot too (`127.0.0.1.`), which a
    resolver may read as the address.
    """
    bare = host.strip().removeprefix("[").removesuffix("]").split("%", 1)[0].removesuffix(".")
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if not bare or not all(c.isalnum() or c == "." for c in bare):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        return None


def embedded(address: IPAddress) -> list[IPAddress]:
    """The address and every IPv4 address it carries (mapped, compatible, 6to4, Teredo, NAT64)."""
    found: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if address.ipv4_mapped is not None:
            found.append(address.ipv4_mapped)
        elif (int(address) >> 32 == 0 and int(address) > 1) or address in NAT64:
            found.append(low32)
        if address.sixtofour is not None:
            found.append(address.sixtofour)
        if address.teredo is not None:
            found += list(address.teredo)
    return found


def kind_of(address: IPAddress) -> str | None:
    """What makes `address` unreachable for outbound calls (`"loopback"`, ...); None when public.

    An IPv4 address carried inside an IPv6 one is judged first: `::ffff:127.0.0.1` is loopback.
    """
    forms = embedded(address)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        forms = forms[1:]  # `::ffff:a.b.c.d` is the IPv4 host a.b.c.d itself
    for form in forms[1:] + forms[:1]:
        v6 = isinstance(form, ipaddress.IPv6Address)
        checks = (
            ("unspecified", form.is_unspecified),
            ("loopback", form.is_loopback),
            ("link-local", form.is_link_local),
            ("multicast", form.is_multicast),
            ("unique-local", v6 and form in UNIQUE_LOCAL),
            ("site-local", isinstance(form, ipaddress.IPv6Address) and form.is_site_local),
            ("reserved", form.is_reserved),
            ("private", form.is_private),
            ("not globally routable", not form.is_global),
        )
        for kind, hit in checks:
            if hit:
                return kind if form == address else f"{kind} ({form} inside it)"
    return None


@dataclass(frozen=True)
class OutboundPolicy:
    """Public addresses, plus the hosts and networks `allow` names."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_setting(cls, allow: str | None) -> OutboundPolicy:
        """From SYNAPSE_WEBHOOK_ALLOW: comma-separated host names, addresses or CIDRs.

        Raises:
            ValueError: an entry that is neither, naming it.
        """
        return cls.of(entry.strip() for entry in (allow or "").split(",") if entry.strip())

    @classmethod
    def of(cls, entries: Iterable[str]) -> OutboundPolicy:
        """From host names, addresses and CIDRs (`hooks.internal`, `127.0.0.1`, `10.0.0.0/8`)."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = entry.lower().rstrip(".")
            if not name or "/" in name or not all(c.isalnum() or c in ".-_" for c in name):
                raise ValueError(f"{ALLOW_SETTING}: {entry!r} is neither a host name, an address nor a CIDR")
            hosts.add(name)
        return cls(frozenset(hosts), tuple(networks))

    def allows_host(self, host: str) -> bool:
        """Whether `allow` names this host (its name, not what it resolves to)."""
        return host.lower().rstrip(".") in self.hosts

    def refusal(self, host: str, address: IPAddress) -> str | None:
        """Why `host`, at `address`, may not be called; None when it may."""
        if self.allows_host(host) or any(
            form in network for form in embedded(address) for network in self.networks
        ):
            return None
        kind = kind_of(address)
        if kind is None:
            return None
        named = "is" if literal_address(host) is not None else f"resolves to {address},"
        return (
            f"{host} {named} a {kind} address; outbound calls go only to public addresses "
            f"unless {ALLOW_SETTING} names the host or its network"
        )

    def check_url(self, url: str) -> None:
        """Refuse a URL that can never be called: not http(s), no host, or a refused literal address
        (names are judged when the call is made, after resolution).

        Raises:
            OutboundRefused: saying why.
        """
        try:
            parts = urlsplit(url)
            if parts.scheme.lower() not in SCHEMES:
                raise OutboundRefused(f"{url!r} is not an http(s) URL")
            host = parts.hostname
            parts.port  # noqa: B018 - a bad port raises here
        except ValueError as err:
            raise OutboundRefused(f"{url!r} is not a valid URL: {err}") from None
        if not host:
            raise OutboundRefused(f"{url!r} names no host")
        address = literal_address(host)
        if address is not None and (why := self.refusal(host, address)):
            raise OutboundRefused(why)
