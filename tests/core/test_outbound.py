"""Outbound calls to a URL a caller named reach only public addresses (or what SYNAPSE_WEBHOOK_ALLOW
names), judged after resolution, connected to as judged, with no redirect followed.

Every refusal is checked against a real listener on loopback that must never see a connection.
"""

from __future__ import annotations

import re
import socket
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.outbound import GuardedTransport, OutboundPolicy, OutboundRefused, guarded_client, literal_address
from core.settings import WebhookSettings

from ..fakes.tcp import listening


def resolving(monkeypatch: pytest.MonkeyPatch, names: dict[str, list[list[str]]]) -> list[str]:
    """Make `socket.getaddrinfo` answer `names` (each lookup takes the next list of addresses; other
    names as before); returns the names looked up, in order. Only the name → address step is faked."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        answers = names[host]
        addresses = answers.pop(0) if len(answers) > 1 else answers[0]
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("fe80::1%eth0", "fe80::1"),
        ("example.com", None),
        ("1e100.net", None),
        ("0x7g.1", None),
    ],
)
def test_a_numeric_host_is_read_as_the_address_the_resolver_would_connect_to(
    host: str, address: str | None
) -> None:
    read = literal_address(host)
    assert (str(read) if read else None) == address
    if address is not None and "%" not in host:
        numeric = socket.getaddrinfo(host.strip("[]"), 80, flags=socket.AI_NUMERICHOST)[0][4][0]
        assert read == literal_address(str(numeric)), "the resolver reads the same address"


REFUSED: list[tuple[str, str | None]] = [
    ("127.0.0.1", "loopback"),
    ("127.0.0.2", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link-local"),
    ("0.0.0.0", "unspecified"),
    ("100.64.0.1", "not globally routable"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("2130706433", "loopback"),
    ("0x7f.1", "loopback"),
    ("0x7f000001", "loopback"),
    ("0177.1", "loopback"),
    ("0x7f.0.0.1", "loopback"),
    ("127.1", "loopback"),
    ("127.0.0.1.", "loopback"),
    ("0177.0.0.1", None),
    ("127.0.0.01", None),
    ("[::1]", "loopback"),
    ("[::]", "unspecified"),
    ("[::ffff:127.0.0.1]", "loopback (127.0.0.1 inside it)"),
    ("[::ffff:7f00:1]", "loopback (127.0.0.1 inside it)"),
    ("[::ffff:169.254.169.254]", "link-local (169.254.169.254 inside it)"),
    ("[::127.0.0.1]", "loopback (127.0.0.1 inside it)"),
    ("[2002:7f00:1::1]", "loopback (127.0.0.1 inside it)"),
    ("[64:ff9b::7f00:1]", "loopback (127.0.0.1 inside it)"),
    ("[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "inside it"),
    ("[fe80::1]", "link-local"),
    ("[fc00::1]", "unique-local"),
    ("[fd12:3456::1]", "unique-local"),
    ("[ff02::1]", "multicast"),
    ("[2001:db8::1]", "private"),
    ("localhost", "loopback"),
    ("loopback.test", "loopback"),
    ("mixed.test", "loopback"),
    ("metadata.test", "link-local"),
]


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_every_internal_target_is_refused_before_any_connection(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    asked = resolving(
        monkeypatch,
        {
            "loopback.test": [["127.0.0.1"]],
            "mixed.test": [["93.184.215.14", "127.0.0.1"]],  # one internal address is enough
            "metadata.test": [["169.254.169.254"]],
        },
    )
    async with listening() as target, guarded_client(OutboundPolicy(), timeout=5) as http:
        for host, kind in REFUSED:
            url = f"{scheme}://{host}:{target.port}/internal/admin/reset?confirm=1"
            if kind is None:  # a dotted quad with leading zeros: httpx refuses the URL itself
                with pytest.raises(httpx.InvalidURL):
                    await http.post(url, content=b"{}")
                continue
            with pytest.raises(OutboundRefused, match="address") as refused:
                await http.post(url, content=b"{}")
            assert kind in str(refused.value) and "SYNAPSE_WEBHOOK_ALLOW" in str(refused.value), host
    assert target.connections == 0, "the listener on loopback is never reached"
    assert asked == ["loopback.test", "mixed.test", "metadata.test"], "names are resolved, numbers are not"


@pytest.mark.parametrize(
    ("allow", "host"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.0/8", "2130706433"),
        ("localhost", "localhost"),
        ("::1, 127.0.0.1", "localhost"),
    ],
)
async def test_what_the_allow_list_names_is_reached(allow: str, host: str) -> None:
    policy = WebhookSettings(allow=allow).policy
    async with listening() as receiver, guarded_client(policy, timeout=5) as http:
        response = await http.post(f"http://{host}:{receiver.port}/hook", content=b"{}")
    assert response.status_code == 200 and receiver.connections == 1
    assert receiver.heads[0].lower().count(f"host: {host}:{receiver.port}".encode()) == 1, (
        "Host keeps the name"
    )


def test_an_allow_entry_that_is_no_host_or_network_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"SYNAPSE_WEBHOOK_ALLOW: 'hooks internal' is neither"):
        WebhookSettings(allow="10.0.0.0/8, hooks internal")


async def test_the_checked_address_is_the_one_connected_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: the name resolves to an allowed address when checked and to loopback a moment
    later; the request goes to the address checked, and the next request is judged afresh."""
    asked = resolving(monkeypatch, {"rebind.test": [["127.0.0.2"], ["127.0.0.1"]]})
    async with listening("127.0.0.2") as allowed, listening("127.0.0.1", allowed.port) as internal:
        transport = GuardedTransport(OutboundPolicy.of(["127.0.0.2/32"]))
        async with httpx.AsyncClient(transport=transport, timeout=5) as http:
            first = await http.post(f"http://rebind.test:{allowed.port}/hook", content=b"{}")
            with pytest.raises(
                OutboundRefused, match=re.escape("rebind.test resolves to 127.0.0.1, a loopback")
            ):
                await http.post(f"http://rebind.test:{allowed.port}/hook", content=b"{}")
    assert first.status_code == 200 and allowed.connections == 1
    assert f"host: rebind.test:{allowed.port}".encode() in allowed.heads[0].lower()
    assert internal.connections == 0 and asked == ["rebind.test", "rebind.test"], "one lookup per request"


@pytest.mark.parametrize("follow", [False, True])
async def test_a_redirect_to_loopback_is_not_followed(follow: bool) -> None:
    """An allowed receiver answers `302 Location: https://127.0.0.1/...`: the guarded client stops
    at the 302; a client that follows redirects through the transport is refused at the hop."""
    async with listening("127.0.0.1") as internal:
        location = f"https://127.0.0.1:{internal.port}/internal/admin/reset?confirm=1"
        moved = f"HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n".encode()
        async with listening("127.0.0.2", answer=moved) as receiver:
            policy = OutboundPolicy.of(["127.0.0.2"])
            url = f"http://127.0.0.2:{receiver.port}/hook"
            if follow:
                client = httpx.AsyncClient(
                    transport=GuardedTransport(policy), follow_redirects=True, timeout=5
                )
                async with client as http:
                    with pytest.raises(OutboundRefused, match=re.escape("127.0.0.1 is a loopback address")):
                        await http.post(url, content=b"{}")
            else:
                async with guarded_client(policy, timeout=5) as http:
                    response = await http.post(url, content=b"{}")
                assert response.status_code == 302
    assert receiver.connections == 1 and internal.connections == 0


def certificate_for(name: str, folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for `name`: (the server's context, a client context trusting it)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    client = ssl.create_default_context(cafile=str(folder / "cert.pem"))
    return server, client


async def test_https_to_the_checked_address_keeps_the_name_for_sni_and_the_certificate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    resolving(monkeypatch, {"hooks.test": [["127.0.0.2"]]})
    server_tls, client_tls = certificate_for("hooks.test", tmp_path)
    names: list[str | None] = []
    server_tls.sni_callback = lambda _sock, name, _ctx: names.append(name)
    async with listening("127.0.0.2", ssl=server_tls) as receiver:
        policy = OutboundPolicy.of(["127.0.0.2"])
        async with guarded_client(policy, timeout=5, verify=client_tls) as http:
            response = await http.post(f"https://hooks.test:{receiver.port}/hook", content=b"{}")
    assert response.status_code == 200 and names == ["hooks.test"]
    assert f"host: hooks.test:{receiver.port}".encode() in receiver.heads[0].lower()
