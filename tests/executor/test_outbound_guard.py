"""The outbound guard: resolve, vet every address, connect only to a vetted one. With the guard on, a loopback
listener never sees a connection, whatever the spelling of its address; the refusal reads the same for open
and closed ports; OAuth token endpoints are guarded the same way. Other ranges are checked as pure functions
(no packet ever leaves loopback)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import replace

import pytest

from shared.actions.http import HttpTarget
from shared.model import JobErrorAction
from shared.private_targets import PrivateTargets, is_internal
from shared.settings import Settings
from tests.executor.peers.raw import AcceptCounter
from tests.executor.peers.servers import ok, serve, server_tls
from tests.executor.support import context

SPELLINGS_V4 = [
    "127.0.0.1",
    "127.1",
    "2130706433",
    "0x7f000001",
    "[::ffff:127.0.0.1]",
    "0.0.0.0",
    "localhost",
    "LOCALHOST",
    "017700000001",
]


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


def _action(url: str, **request: object) -> JobErrorAction:
    return JobErrorAction.model_validate(
        {"type": "Http", "request": {"uri": url, "method": "POST", "body": "x", **request}}
    )


@pytest.fixture
def listener() -> Iterator[AcceptCounter]:
    counter = AcceptCounter("127.0.0.1")
    yield counter
    counter.close()


@pytest.fixture
def guarded(settings: Settings) -> HttpTarget:
    return HttpTarget(replace(settings, private_targets=PrivateTargets()))


def test_no_loopback_spelling_gets_a_connection_with_the_guard_on(guarded: HttpTarget, listener: AcceptCounter) -> None:
    for spelling in SPELLINGS_V4:
        for scheme in ("http", "https"):
            result = guarded.run(_action(f"{scheme}://{spelling}:{listener.port}/hook"), context())
            assert not result.succeeded
            assert "was refused" in result.message and "resolves to an internal address" in result.message, (
                spelling,
                result.message,
            )
    assert listener.accepted == 0


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_the_ipv6_loopback_gets_no_connection_either(guarded: HttpTarget) -> None:
    counter = AcceptCounter("::1")
    try:
        for spelling in ("[::1]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]"):
            result = guarded.run(_action(f"http://{spelling}:{counter.port}/"), context())
            assert "resolves to an internal address" in result.message, result.message
        assert counter.accepted == 0
    finally:
        counter.close()


def test_the_refusal_is_the_same_for_an_open_and_a_closed_port(guarded: HttpTarget, listener: AcceptCounter) -> None:
    closed = AcceptCounter("127.0.0.1")
    closed_port = closed.port
    closed.close()
    open_answer = guarded.run(_action(f"http://127.0.0.1:{listener.port}/"), context()).message
    closed_answer = guarded.run(_action(f"http://127.0.0.1:{closed_port}/"), context()).message
    assert open_answer == closed_answer
    assert listener.accepted == 0


def test_the_listener_does_count_when_private_targets_are_allowed(settings: Settings, listener: AcceptCounter) -> None:
    """The control: the same listener sees the connection once the guard is off (the test could not pass vacuously)."""
    result = HttpTarget(settings, timeout=2).run(_action(f"http://127.0.0.1:{listener.port}/"), context())
    assert not result.succeeded  # the counter hangs up without answering
    assert listener.accepted == 1


def test_oauth_token_endpoints_are_guarded_the_same_way(settings: Settings, listener: AcceptCounter) -> None:
    authority = f"http://127.1:{listener.port}"
    target = HttpTarget(replace(settings, private_targets=PrivateTargets(), aad_authority_host=authority))
    auth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "contoso.onmicrosoft.com",
        "clientId": "c",
        "secret": "s",
        "audience": "https://hooks.example.com",
    }
    # The action's own target is a name that resolves publicly in no test; the token request comes first anyway.
    result = target.run(_action("https://hooks.example.invalid/run", authentication=auth), context())
    assert not result.succeeded
    assert "token endpoint was refused" in result.message and "internal address" in result.message
    assert listener.accepted == 0


def test_the_pinned_connection_keeps_the_name_for_host_sni_and_verification(settings: Settings, pki) -> None:
    """The socket goes to the vetted address; the Host header, TLS SNI and certificate check still use the name."""
    cert, key = pki.ca.issue("localhost", server=True, dns_names=("localhost",)).pem_files(pki.folder, "named")
    tls = server_tls(cert, key)
    server_names: list[str | None] = []
    tls.sni_callback = lambda sock, name, context: server_names.append(name)
    server = serve(ok, tls=tls)
    port = server.url.rsplit(":", 1)[1]
    target = HttpTarget(settings, cafile=str(pki.ca_file), timeout=5)
    try:
        named = target.run(_action(f"https://localhost:{port}/hook"), context())
        by_address = target.run(_action(f"https://127.0.0.1:{port}/hook"), context())
    finally:
        server.close()
    assert named.succeeded, named.message
    assert server.hits[0].headers["host"] == f"localhost:{port}"
    assert server_names[0] == "localhost"
    assert not by_address.succeeded and "CERTIFICATE_VERIFY_FAILED" in by_address.message  # the cert names localhost


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "127.0.0.1",
        "127.255.255.254",
        "0.0.0.0",
        "0.1.2.3",
        "169.254.169.254",
        "168.63.129.16",
        "100.64.0.1",
        "192.0.0.8",
        "198.18.0.1",
        "255.255.255.255",
        "224.0.0.1",
        "::",
        "::1",
        "fe80::1",
        "fe80::1%eth0",
        "fc00::1",
        "fd00:ec2::254",
        "ff02::1",
        "::ffff:10.0.0.1",
        "::ffff:127.0.0.1",
        "::10.0.0.1",
        "::127.0.0.1",
        "::ffff:0:a00:1",
        "64:ff9b::a00:1",
        "64:ff9b::7f00:1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::a83f:8110",
        "64:ff9b:1::808:808",
        "2002:a00:1::",
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::1",
        "2002:a83f:8110::",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    ],
)
def test_internal_addresses_are_recognised(address: str) -> None:
    assert is_internal(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "20.50.1.1",
        "2606:4700:4700::1111",
        "2a01:111:f400::1",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "::ffff:8.8.8.8",
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert not is_internal(address)
