"""One outbound HTTP(S) exchange: vetted, pinned, on a connection of its own, under one deadline.

- Guarded (network.py): the name is resolved once and every address vetted before any connection;
  the connection goes only to those addresses.
- Pinned: the socket connects to the vetted address while the Host header, TLS SNI and certificate
  verification keep the name (the approach of Stripe's smokescreen and the advocate library).
- Never shared: each exchange opens its own connection, says `Connection: close` and closes it. A
  pooled connection outliving its job is how bytes one job smuggled into it could capture the next
  job's request (credentials included), so no connection ever serves two exchanges.
- One deadline (`Deadline`) covers name resolution, connect, TLS handshake, sending and reading the
  response: the lookup and each connect wait at most the time left, and a watchdog shuts the socket
  down when the deadline passes, cutting a peer that trickles a byte at a time in the middle of any
  read or write. (A lookup given up on finishes in the background under the resolver's own timeouts.)

Built on urllib3's connection classes (its HTTP/1.1 framing, TLS wrapping and hostname matching);
only the address the socket connects to is ours.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from typing import Any

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import HTTPError as Urllib3Error

from .network import AddressInfo, resolve

# Name lookups run here so an attempt can stop waiting for a slow resolver at its deadline.
_LOOKUPS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="outbound-lookup")


class OutboundError(Exception):
    """The exchange failed; `cause` is safe for history (a type or TLS reason, never a URI or secret)."""

    def __init__(self, cause: str, *, timed_out: bool = False, responded: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.timed_out = timed_out
        self.responded = responded  # the status line had arrived: the response broke off


class Deadline:
    """A point in time (monotonic clock) that an attempt's network work must finish by."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise OutboundError("deadline passed", timed_out=True)
        return left

    def within(self, seconds: float) -> Deadline:
        """A deadline no later than this one and at most `seconds` away (e.g. for a token request)."""
        inner = Deadline(seconds)
        inner.at = min(inner.at, self.at)
        return inner


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes  # at most the `max_body` asked for


class _Watchdog:
    """Shuts the connection's socket down at the deadline, whatever read, write or handshake it is in.

    It holds the socket's descriptor rather than the socket object: TLS wrapping moves the descriptor
    into a new object. `disarm` runs before the socket is closed, under the same lock as the shutdown,
    so a descriptor number reused after the close is never touched.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd = -1
        self._done = False
        self._timer: threading.Timer | None = None
        self.fired = False

    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._fd = sock.fileno()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done or self._fd < 0:
                return
            self.fired = True
            try:
                borrowed = socket.socket(fileno=self._fd)
                try:
                    borrowed.shutdown(socket.SHUT_RDWR)
                finally:
                    borrowed.detach()
            except OSError:
                pass  # already closed by the peer

    def disarm(self) -> None:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()


class _Pinned:
    """Mixin for urllib3 connections: connect to the vetted addresses, never resolve the host again."""

    addresses: list[AddressInfo]
    deadline: Deadline
    watchdog: _Watchdog

    def _new_conn(self) -> socket.socket:
        last: OSError | None = None
        for family, kind, proto, _, sockaddr in self.addresses:
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(self.deadline.remaining())
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            except OutboundError:
                sock.close()
                raise
            self.watchdog.arm(sock, self.deadline.remaining())
            return sock
        raise last or OSError("no address to connect to")


class _PinnedHTTP(_Pinned, HTTPConnection):
    pass


class _PinnedHTTPS(_Pinned, HTTPSConnection):
    pass


def exchange(
    method: str,
    scheme: str,
    host: str,
    port: int,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    allow_private: bool,
    ssl_context: ssl.SSLContext,
    deadline: Deadline,
    max_body: int,
) -> Reply:
    """Send one request to `host` (a name or IP literal, no brackets) and read the status, headers and
    at most `max_body` bytes of the body. Raises TargetRefused (network.py) or OutboundError."""
    addresses = _resolve_within(host, port, allow_private, deadline)
    watchdog = _Watchdog()
    connection: _PinnedHTTP | _PinnedHTTPS
    if scheme == "https":
        connection = _PinnedHTTPS(
            host, port, timeout=deadline.seconds, ssl_context=ssl_context, cert_reqs="CERT_REQUIRED"
        )
    else:
        connection = _PinnedHTTP(host, port, timeout=deadline.seconds)
    connection.addresses, connection.deadline, connection.watchdog = addresses, deadline, watchdog
    responded = False
    try:
        connection.request(method, target, body=body, headers={**headers, "Connection": "close"}, preload_content=False)
        response = connection.getresponse()
        responded = True
        data = response.read(max_body, decode_content=True) if max_body else b""
        return Reply(response.status, response.reason or "", list(response.headers.items()), data or b"")
    except OutboundError:
        raise
    except Exception as exc:  # every transport failure becomes a failed attempt
        if watchdog.fired or isinstance(exc, TimeoutError):
            raise OutboundError("timeout", timed_out=True, responded=responded) from exc
        raise OutboundError(_cause(exc), responded=responded) from exc
    finally:
        watchdog.disarm()
        connection.close()


def _resolve_within(host: str, port: int, allow_private: bool, deadline: Deadline) -> list[AddressInfo]:
    try:
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
            return resolve(host, port, allow_private)  # a literal: no lookup to wait for
        except ValueError:
            pass
        return _LOOKUPS.submit(resolve, host, port, allow_private).result(timeout=deadline.remaining())
    except LookupTimeout as exc:
        raise OutboundError("timeout", timed_out=True) from exc
    except socket.gaierror as exc:
        raise OutboundError("NameResolutionError") from exc
    except UnicodeError as exc:  # a name the IDNA codec refuses
        raise OutboundError("NameResolutionError") from exc


def _cause(exc: BaseException) -> str:
    """A name for what went wrong; never the exception's text, which may quote the URI."""
    seen: Any = exc
    for _ in range(8):  # urllib3 and http.client wrap the socket error: a short chain
        if isinstance(seen, ssl.SSLError):
            return f"SSLError ({seen.reason or type(seen).__name__})"
        if not isinstance(seen, BaseException):
            break
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, (http.client.HTTPException, Urllib3Error)) and not isinstance(
        exc, http.client.RemoteDisconnected
    ):
        return "ProtocolError"
    return "ConnectionError"
