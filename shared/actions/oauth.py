"""ActiveDirectoryOAuth authentication: a client-credentials token for `audience`, cached until expiry.

A plain POST to the v1 endpoint `{authority}/{tenant}/oauth2/token` (grant_type client_credentials,
resource = audience), which is what the old service used. msal and azure-identity validate the
authority against Azure AD's instance discovery, which refuses the local token endpoint an
operator (or a test) configures through SCHEDULER_AAD_AUTHORITY_HOST; a direct POST has no such
limit. Tokens are cached per (authority, tenant, client, secret digest, audience) and renewed a
few minutes before they expire.

The token request goes out as the action does (outbound.py): the same private-target guard, a vetted
and pinned address, a connection of its own, and a deadline of its own (`timeout`); each attempt waits
for it at most until its own deadline. Attempts of one event loop that need the same token while it is
being fetched share that one request (a herd of jobs under one credential asks the authority once). The
tenant must be a tenant id or domain name: it is a path segment of the token URL and may not leave it (`..`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import ssl
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ..private_targets import PrivateTargets
from .network import TargetRefused
from .outbound import Deadline, OutboundError, exchange

TOKEN_TIMEOUT_SECONDS = 30
# Renew this long before expiry, so a token never expires between the cache hit and the request.
RENEW_BEFORE_SECONDS = 300
MAX_TOKEN_RESPONSE_BYTES = 65_536
# An Entra ID tenant: a GUID or a domain name (labels of letters, digits and inner hyphens).
_TENANT = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)


def valid_tenant(tenant: str) -> bool:
    return _TENANT.fullmatch(tenant) is not None


class TokenError(Exception):
    """No token could be obtained; the message is safe for history (no secret, no token)."""


Pending = dict[tuple[object, ...], "asyncio.Task[str]"]


async def shared_request(
    pending: Pending, key: tuple[object, ...], fetch: Callable[[], Coroutine[Any, Any, str]], limit: Deadline, late: str
) -> str:
    """The token `fetch` gets, one request for every asker of `key` on this event loop at once (a task belongs to
    the loop that runs it), awaited until `limit`: TokenError(`late`) after it. A caller giving up does not cancel
    the request the others share."""
    loop = asyncio.get_running_loop()
    flight = (*key, id(loop))
    task = pending.get(flight)
    if task is None or task.get_loop() is not loop:
        task = loop.create_task(fetch())
        pending[flight] = task
        task.add_done_callback(lambda done: pending.pop(flight, None) if pending.get(flight) is done else None)
    try:
        return await asyncio.wait_for(asyncio.shield(task), timeout=max(limit.at - time.monotonic(), 0.0))
    except TimeoutError as exc:
        raise TokenError(late) from exc


@dataclass(frozen=True)
class _Cached:
    token: str
    renew_at: float  # time.monotonic() seconds


class TokenCache:
    def __init__(
        self,
        authority: str,
        private_targets: PrivateTargets,
        ssl_context: ssl.SSLContext,
        timeout: float = TOKEN_TIMEOUT_SECONDS,
        lookups: Executor | None = None,
    ) -> None:
        self.authority = authority.rstrip("/")
        self.lookups = lookups  # where the authority's name is looked up (outbound.py `exchange`)
        self.private_targets = private_targets
        self.ssl_context = ssl_context
        self.timeout = timeout
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, ...], _Cached] = {}
        # Token requests under way, by key and event loop (a task belongs to the loop that runs it).
        self._pending: Pending = {}

    async def token(
        self, tenant: str, client_id: str, secret: str, audience: str, deadline: Deadline | None = None
    ) -> str:
        """A bearer token for `audience`; raises TokenError when the authority refuses or is unreachable.

        Waits at most until `deadline` (the attempt's) and at most `timeout` seconds."""
        if not valid_tenant(tenant):
            raise TokenError("the tenant is not a tenant id or domain name")
        key = (tenant.lower(), client_id, hashlib.sha256(secret.encode()).hexdigest(), audience)
        with self._lock:
            cached = self._tokens.get(key)
            if cached is not None and cached.renew_at > time.monotonic():
                return cached.token
        limit = deadline.within(self.timeout) if deadline is not None else Deadline(self.timeout)
        fetch = lambda: self._fetch(key, tenant, client_id, secret, audience)  # noqa: E731
        return await shared_request(self._pending, key, fetch, limit, "the token endpoint timed out")

    async def _fetch(self, key: tuple[str, ...], tenant: str, client_id: str, secret: str, audience: str) -> str:
        started = time.monotonic()
        token, lifetime = await self._request(tenant, client_id, secret, audience, Deadline(self.timeout))
        with self._lock:
            self._tokens[key] = _Cached(token, started + max(lifetime - RENEW_BEFORE_SECONDS, lifetime / 2))
            self._drop_expired(started)
        return token

    async def _request(
        self, tenant: str, client_id: str, secret: str, audience: str, deadline: Deadline
    ) -> tuple[str, float]:
        url = urlsplit(f"{self.authority}/{quote(tenant, safe='')}/oauth2/token")
        scheme = url.scheme.lower()
        form = urlencode(
            {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret, "resource": audience}
        ).encode("ascii")
        try:
            reply = await exchange(
                "POST",
                scheme,
                url.hostname or "",
                url.port or (443 if scheme == "https" else 80),
                url.path,
                {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
                form,
                private_targets=self.private_targets,
                ssl_context=self.ssl_context,
                deadline=deadline,
                max_body=MAX_TOKEN_RESPONSE_BYTES,
                lookups=self.lookups,
            )
        except TargetRefused as exc:
            raise TokenError(f"the token endpoint was refused: {exc}") from exc
        except OutboundError as exc:
            what = "timed out" if exc.timed_out else f"could not be reached ({exc.cause})"
            raise TokenError(f"the token endpoint {what}") from exc
        try:
            payload = json.loads(reply.body)
        except ValueError:
            payload = {}
        if reply.status != 200 or not isinstance(payload, dict) or "access_token" not in payload:
            # `error` is a code such as invalid_client; the description may echo request details, so it stays out.
            code = payload.get("error") if isinstance(payload, dict) else None
            raise TokenError(f"the token endpoint answered {reply.status}" + (f" ({code})" if code else ""))
        try:
            lifetime = float(payload.get("expires_in", 3600))
        except (TypeError, ValueError):
            lifetime = 3600.0
        return str(payload["access_token"]), lifetime

    def _drop_expired(self, now: float) -> None:
        for key in [k for k, v in self._tokens.items() if v.renew_at <= now]:
            del self._tokens[key]
