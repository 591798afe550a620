"""Outbound target policy: no calls into private, loopback or link-local networks unless allowed.

The check runs on the addresses the name resolves to at execution time, not on the name given at
creation, because a public name can later resolve to an internal address.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit


class TargetRefused(Exception):
    """The target resolves to an address this deployment may not call."""


def is_internal(address: str) -> bool:
    """True for every address that is not globally routable (private, loopback, link-local, CGNAT...)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def check_target(uri: str, allow_private: bool) -> None:
    """Raise TargetRefused when `uri`'s host resolves to an internal address (and that is not allowed)."""
    if allow_private:
        return
    parts = urlsplit(uri)
    host = parts.hostname
    if not host:
        raise TargetRefused("the URI has no host")
    try:
        infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise TargetRefused(f"the host name could not be resolved ({exc.strerror})") from exc
    for info in infos:
        address = str(info[4][0])
        if is_internal(address):
            raise TargetRefused(
                f"'{host}' resolves to the internal address {address}; "
                "set SCHEDULER_ALLOW_PRIVATE_TARGETS=true to allow it"
            )
