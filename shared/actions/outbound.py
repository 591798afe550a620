"""One outbound HTTP(S) exchange: vetted, pinned, on a connection of its own, under one deadline.

A coroutine on aiohttp, so an action waiting for its target holds no thread: a process keeps thousands
of actions in flight (shared/actions/limits.py bounds how many) on one event loop.

- Guarded (network.py): the name is resolved once and every address vetted before any connection;
  the connection goes only to those addresses.
- Pinned: the connector's resolver hands back exactly the vetted addresses, while the Host header,
  TLS SNI and certificate verification keep the name (the approach of Stripe's smokescreen and the
  advocate library). aiohttp skips the resolver for a host that is all digits and dots or holds a
  colon (an IP literal); such a host is parsed, never looked up, so the socket goes to the address
  that was vetted for the same text.
- Never shared: each exchange has a connector and a session of its own, says `Connection: close` and
  closes them. A pooled connection outliving its job is how bytes one job smuggled into it could
  capture the next job's request (credentials included), so no connection ever serves two exchanges.
- One deadline (`Deadline`) covers name resolution, connect, TLS handshake, sending and reading the
  response: the whole exchange runs under one `asyncio.timeout`, which cancels it in the middle of any
  read or write, so a peer that trickles a byte at a time is cut at the deadline. (A lookup given up
  on finishes in the background under the resolver's own timeouts.)
- Paced (optional `before_send`): awaited once the connection is made (TLS included), right before the request's
  first bytes are written (`_paced`); the executor's rate limits take their turn there (shared/executor/
  wire_turns.py), so the spacing they keep is the spacing on the wire. It counts against the deadline.
- The response: at most `max_body` bytes of the (decoded) body are read; header lines up to 64 KiB and
  100 of them, as http.client allowed before.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from ..private_targets import PrivateTargets
from .network import AddressInfo, resolve

# What http.client accepted: a target's header lines up to 64 KiB, 100 of them.
MAX_HEADER_LINE = 65536
MAX_HEADERS = 100
# Headers aiohttp would add on its own; the request carries only what the job and the scheduler set
# (plus Host, Content-Length and the two below, as the client before sent them).
_NOT_AUTOMATIC = frozenset({"Accept", "Accept-Encoding", "User-Agent", "Content-Type"})
_CLIENT_HEADERS = {"Accept-Encoding": "identity", "User-Agent": f"python-aiohttp/{aiohttp.__version__}"}


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


class _Pinned(AbstractResolver):
    """The connector's resolver: the addresses vetted for this exchange, and never a lookup."""

    def __init__(self, host: str, addresses: list[AddressInfo]) -> None:
        self._results: list[ResolveResult] = [
            {
                "hostname": host,
                "host": str(sockaddr[0]),
                "port": int(sockaddr[1]),
                "family": family,
                "proto": proto,
                "flags": socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
            }
            for family, _, proto, _, sockaddr in addresses
        ]

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return self._results

    async def close(self) -> None:
        return None


@dataclass
class _Progress:
    responded: bool = False


async def exchange(
    method: str,
    scheme: str,
    host: str,
    port: int,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    private_targets: PrivateTargets,
    ssl_context: ssl.SSLContext,
    deadline: Deadline,
    max_body: int,
    before_send: Callable[[], Awaitable[None]] | None = None,
    lookups: Executor | None = None,
) -> Reply:
    """Send one request to `host` (a name or IP literal, no brackets) and read the status, headers and
    at most `max_body` bytes of the body. Raises TargetRefused (network.py) or OutboundError.

    `lookups`: where the name is looked up, off the event loop, so the exchange can stop waiting for a slow
    resolver at its deadline (the runtime's outbound-lookup lane, shared/threads.py); None: the event loop's
    default executor (a target built by hand: tests, tools)."""
    progress = _Progress()
    try:
        async with asyncio.timeout(deadline.remaining()):
            addresses = await _resolve(host, port, private_targets, lookups)
            return await _send(
                method,
                scheme,
                host,
                port,
                target,
                headers,
                body,
                addresses,
                ssl_context,
                max_body,
                progress,
                before_send,
            )
    except OutboundError:
        raise
    except TimeoutError as exc:
        raise OutboundError("timeout", timed_out=True, responded=progress.responded) from exc
    except (socket.gaierror, UnicodeError) as exc:  # no such name, or one the IDNA codec refuses
        raise OutboundError("NameResolutionError") from exc
    except (aiohttp.ClientError, OSError, ValueError) as exc:  # every transport failure becomes a failed attempt
        raise OutboundError(_cause(exc), responded=progress.responded) from exc


async def _resolve(host: str, port: int, policy: PrivateTargets, lookups: Executor | None) -> list[AddressInfo]:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return resolve(host, port, policy)  # a literal: no lookup to wait for
    except ValueError:
        pass
    return await asyncio.get_running_loop().run_in_executor(lookups, resolve, host, port, policy)


async def _send(
    method: str,
    scheme: str,
    host: str,
    port: int,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    addresses: list[AddressInfo],
    ssl_context: ssl.SSLContext,
    max_body: int,
    progress: _Progress,
    before_send: Callable[[], Awaitable[None]] | None,
) -> Reply:
    authority = f"[{host}]" if ":" in host else host
    default_port = 443 if scheme == "https" else 80
    url = URL(f"{scheme}://{authority}{'' if port == default_port else f':{port}'}{target}", encoded=True)
    connector = aiohttp.TCPConnector(resolver=_Pinned(host, addresses), use_dns_cache=False, force_close=True, limit=1)
    session = aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),
        skip_auto_headers=_NOT_AUTOMATIC,
        timeout=aiohttp.ClientTimeout(total=None),
        max_line_size=MAX_HEADER_LINE,
        max_field_size=MAX_HEADER_LINE,
        max_headers=MAX_HEADERS,
        trace_configs=[_PACED] if before_send is not None else None,
    )
    async with (
        session,
        session.request(
            method,
            url,
            headers={**_CLIENT_HEADERS, **headers, "Connection": "close"},
            data=body,
            allow_redirects=False,
            ssl=ssl_context,
            trace_request_ctx=_Turn(before_send, bool(body)) if before_send is not None else None,
        ) as response,
    ):
        progress.responded = True
        data = bytearray()
        while len(data) < max_body:
            chunk = await response.content.read(max_body - len(data))
            if not chunk:
                break
            data += chunk
        return Reply(response.status, response.reason or "", list(response.headers.items()), bytes(data))


class _Turn:
    """One request's `before_send`, awaited once, at aiohttp's last await before the request's first bytes are
    written: a request without a body is written right after its headers are handed over (`on_request_headers_sent`,
    awaited before they are written, despite its name); one with a body in a task of its own, with its first chunk
    (`on_request_chunk_sent`, awaited right before the headers and that chunk go out together)."""

    def __init__(self, before_send: Callable[[], Awaitable[None]], body: bool) -> None:
        self.before_send: Callable[[], Awaitable[None]] | None = before_send
        self.body = body

    async def take(self) -> None:
        step, self.before_send = self.before_send, None
        if step is not None:
            await step()


async def _headers_handed_over(_: object, context: Any, __: object) -> None:
    turn = context.trace_request_ctx
    if isinstance(turn, _Turn) and not turn.body:
        await turn.take()


async def _first_chunk(_: object, context: Any, __: object) -> None:
    turn = context.trace_request_ctx
    if isinstance(turn, _Turn):
        await turn.take()


def _paced_trace() -> aiohttp.TraceConfig:
    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(_headers_handed_over)
    trace.on_request_chunk_sent.append(_first_chunk)
    return trace


# One for every paced request: each request's own turn rides in its `trace_request_ctx`. A TraceConfig per request
# cost about a tenth of the executor's CPU in a steady load (its dozen signals built each time).
_PACED = _paced_trace()


def _cause(exc: BaseException) -> str:
    """A name for what went wrong; never the exception's text, which may quote the URI."""
    seen: Any = exc
    for _ in range(8):  # aiohttp wraps the socket or TLS error: a short chain
        if isinstance(seen, aiohttp.ClientConnectorCertificateError):
            seen = seen.certificate_error
        elif isinstance(seen, aiohttp.ClientConnectorError):
            seen = seen.os_error
        if isinstance(seen, ssl.SSLError):
            return f"SSLError ({seen.reason or type(seen).__name__})"
        if isinstance(seen, ConnectionRefusedError):  # the commonest local mistake: a port nothing listens on
            return "ConnectionError (connection refused: nothing listens on the target's port)"
        if isinstance(seen, ConnectionResetError):
            return "ConnectionError (connection reset by the target)"
        if not isinstance(seen, BaseException):
            break
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, (aiohttp.ClientResponseError, aiohttp.ClientPayloadError, ValueError)):
        return "ProtocolError"
    return "ConnectionError"
