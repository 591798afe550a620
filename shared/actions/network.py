"""Outbound target policy: no calls into private, loopback or link-local networks unless allowed.

The check runs on the address a connection is actually made to, right after the TCP connect and
before a byte is sent (TLS handshake included). Checking a DNS answer first and connecting later
would leave a window in which a rebinding name swaps a public address for an internal one; checking
the connected socket's peer closes that window, whatever the resolver answered in between.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

ALLOW_SETTING = "SCHEDULER_ALLOW_PRIVATE_TARGETS"


class TargetRefused(Exception):  # noqa: N818 - the name reads as the history message says it
    """The target resolves to an address this deployment may not call.

    Deliberately not an OSError: urllib3 would wrap or retry those, this must reach the caller as is.
    """


def is_internal(address: str) -> bool:
    """True for every address that is not globally routable (private, loopback, link-local, CGNAT...)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def check_peer(sock: socket.socket, host: str) -> None:
    """Raise TargetRefused (after closing `sock`) when its peer is an internal address."""
    address = str(sock.getpeername()[0])
    if is_internal(address):
        sock.close()
        raise TargetRefused(
            f"'{host}' resolves to the internal address {address}; set {ALLOW_SETTING}=true to allow it"
        )


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        check_peer(sock, str(self.host))
        return sock


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        # HTTPSConnection.connect() calls this before the TLS handshake, so nothing leaves unchecked.
        sock = super()._new_conn()
        check_peer(sock, str(self.host))
        return sock


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """A requests adapter whose every new connection is checked, and whose HTTPS uses `ssl_context`.

    The context carries the trust store (and, for ClientCertificate, the key held only in memory);
    requests' own per-connection CA loading is switched off so the shared context is never mutated.
    """

    def __init__(self, allow_private: bool, ssl_context: ssl.SSLContext, pool_size: int = 16) -> None:
        self.allow_private = allow_private
        self.ssl_context = ssl_context
        super().__init__(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        if not self.allow_private:
            self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def build_connection_pool_key_attributes(
        self, request: Any, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        if host_params.get("scheme") == "https":
            pool_kwargs["ssl_context"] = self.ssl_context
        return host_params, pool_kwargs

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        # Verification always happens, with the trust store inside ssl_context (hostname included).
        if url.lower().startswith("https"):
            conn.cert_reqs = "CERT_REQUIRED"
            conn.ca_certs = None
            conn.ca_cert_dir = None
