"""`GuardedTransport`: an httpx transport that calls only what `OutboundPolicy` allows.

For each request it resolves the host once, refuses the request when any address it resolves to
is refused, and connects to a checked address itself, keeping the `Host` header and the TLS server
name (SNI, and the certificate check) of the URL. So a name that resolves to a public address when
checked and to loopback a moment later (DNS rebinding) is never called on the second. Redirects
are the client's business: `guarded_client` follows none, and a client that does would send each
hop through this transport again. Proxies from the environment are ignored: the proxy would do
its own resolving.
"""

from __future__ import annotations

import asyncio
import socket
import ssl

import httpx

from .policy import IPAddress, OutboundPolicy, OutboundRefused, literal_address


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to (for TCP), in the resolver's order.

    Raises:
        httpx.ConnectError: the name does not resolve.
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise httpx.ConnectError(f"{host} does not resolve: {err}") from err
    found: list[IPAddress] = []
    for info in infos:
        address = literal_address(str(info[4][0]))
        if address is not None and address not in found:
            found.append(address)
    return found


class GuardedTransport(httpx.AsyncBaseTransport):
    """Sends a request only to an address `policy` allows, connecting to the very address checked."""

    def __init__(self, policy: OutboundPolicy, *, verify: ssl.SSLContext | bool = True) -> None:
        self.policy = policy
        self._verify = verify
        self._pools: dict[tuple[str, str, int], httpx.AsyncHTTPTransport] = {}
        """One connection pool per origin as named, so a TLS connection made for one name is never
        reused for another name at the same address."""

    async def addresses(self, host: str, port: int) -> list[IPAddress]:
        """The addresses to connect to for `host`, all of them checked.

        Raises:
            OutboundRefused: one of them is refused (saying which and why).
            httpx.ConnectError: the name does not resolve.
        """
        literal = literal_address(host)
        addresses = [literal] if literal is not None else await resolve(host, port)
        for address in addresses:
            why = self.policy.refusal(host, address)
            if why:
                raise OutboundRefused(why)
        if not addresses:
            raise httpx.ConnectError(f"{host} resolves to no address")
        return addresses

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check the host's addresses, then send to the first that accepts a connection (the
        request's URL is rewritten to that address; `Host` and SNI keep the name)."""
        url = request.url
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await self.addresses(host, port)
        if "host" not in request.headers:
            request.headers["host"] = url.netloc.decode("ascii")
        if url.scheme == "https" and literal_address(host) is None:
            request.extensions = {**request.extensions, "sni_hostname": host}
        pool = self._pools.get((url.scheme, host, port))
        if pool is None:
            pool = httpx.AsyncHTTPTransport(verify=self._verify, retries=0, trust_env=False)
            self._pools[(url.scheme, host, port)] = pool
        failures: list[httpx.ConnectError] = []
        for address in addresses:
            request.url = url.copy_with(host=str(address))
            try:
                return await pool.handle_async_request(request)
            except httpx.ConnectError as err:
                failures.append(err)
        raise failures[-1]

    async def aclose(self) -> None:
        """Close every connection pool."""
        for pool in self._pools.values():
            await pool.aclose()
        self._pools.clear()


def guarded_client(
    policy: OutboundPolicy, *, timeout: float, verify: ssl.SSLContext | bool = True
) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` whose every request goes through `GuardedTransport`: no redirects
    followed, no proxies from the environment."""
    return httpx.AsyncClient(
        transport=GuardedTransport(policy, verify=verify),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
    )
