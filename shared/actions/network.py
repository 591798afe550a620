"""Outbound target policy: resolve the name, vet every address, and hand back only vetted addresses.

No connection is made before the check (outbound.py connects only to the addresses returned here), so
no packet ever reaches an internal address, and a refusal reads the same whatever the state of the
port behind it: the scheduler cannot be used to scan internal ports. One resolution serves the whole
request, so a name that rebinds to an internal address after the check is never connected to.

"Internal" is everything not globally routable (private, loopback, link-local, CGNAT, unspecified,
multicast, documentation...), Azure's platform address 168.63.129.16, and any IPv6 address that embeds
such an IPv4 address: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), SIIT (::ffff:0:0:0/96),
NAT64 (64:ff9b::/96; the local-use 64:ff9b:1::/48 is refused whole), 6to4 (2002::/16) and Teredo.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

ALLOW_SETTING = "SCHEDULER_ALLOW_PRIVATE_TARGETS"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressInfo = tuple[Any, ...]  # one getaddrinfo() entry: (family, type, proto, canonname, sockaddr)

# Beyond `is_global`: Azure's wire server / DNS / health probe address, and IETF protocol assignments
# that Python 3.11 still calls global.
_ALSO_INTERNAL = (
    ipaddress.ip_network("168.63.129.16/32"),
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("64:ff9b:1::/48"),  # RFC 8215 local-use NAT64: never globally routed
)
# IPv6 ranges whose low 32 bits are an IPv4 address.
_LOW_32_EMBEDS = (
    ipaddress.ip_network("::/96"),  # IPv4-compatible (deprecated)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # SIIT IPv4-translated
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix
)


class TargetRefused(Exception):  # the name reads as the history message says it
    """The target resolves to an address this deployment may not call. The message is the same whatever
    the port's state (nothing was connected to learn it)."""


def _embedded(ip: IPAddress) -> Iterator[IPAddress]:
    yield ip
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            yield ip.ipv4_mapped
        if ip.sixtofour is not None:
            yield ip.sixtofour
        if ip.teredo is not None:
            yield from ip.teredo
        if any(ip in network for network in _LOW_32_EMBEDS):
            yield ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)


def _internal(ip: IPAddress) -> bool:
    return not ip.is_global or ip.is_multicast or any(ip in network for network in _ALSO_INTERNAL)


def is_internal(address: str) -> bool:
    """True when `address` (an IP literal, optionally with an IPv6 zone) is, or embeds, an internal address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return any(_internal(candidate) for candidate in _embedded(ip))


def refusal(host: str) -> TargetRefused:
    return TargetRefused(f"'{host}' resolves to an internal address; set {ALLOW_SETTING}=true to allow it")


def resolve(host: str, port: int, allow_private: bool) -> list[AddressInfo]:
    """The TCP addresses to connect to for `host`: all of them vetted unless `allow_private`.

    Raises TargetRefused when any address is internal (a name that answers with one public and one
    internal address is refused whole), socket.gaierror when the name does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    if not allow_private and any(is_internal(str(info[4][0])) for info in infos):
        raise refusal(host)
    return infos
