"""Http and Https actions: one request per attempt, 60 s for all of it, redirects not followed.

Success is a 2xx status; 3xx/4xx/5xx, timeouts and connection errors are failures (docs/decisions.md).
The request is prepared by `requests` (URI normalisation, IDNA, Basic credentials) and sent by
outbound.py: to a vetted address pinned for the request (the private-target policy, network.py), on a
connection of its own that no other job ever uses, with one deadline (`TIMEOUT_SECONDS`) covering
connect, TLS, send and the response. Authentication: Basic, ClientCertificate (client_certificate.py),
ActiveDirectoryOAuth (oauth.py, whose token request takes the same guarded path within the same
deadline) and ManagedIdentity (managed_identity.py: the app's own identity, within the same deadline).
Framing and hop-by-hop headers are the client's alone (framing.py).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from urllib.parse import urlsplit

import requests
from requests.auth import HTTPBasicAuth
from requests.utils import DEFAULT_CA_BUNDLE_PATH

from ..model import HttpAuthenticationType, HttpRequest, format_utc
from ..model import JobErrorAction as Action
from ..settings import Settings
from .accepted import UnusableLocation, accepted_work, retry_after
from .base import MAX_BODY_BYTES, PUSHBACK_STATUSES, ActionResult, ExecutionContext, PushBack, truncate_body
from .client_certificate import CertificateError, ContextCache
from .framing import is_framing_header
from .managed_identity import ManagedIdentityTokens
from .network import TargetRefused
from .oauth import TokenCache, TokenError
from .outbound import Deadline, OutboundError, Reply, exchange

TIMEOUT_SECONDS = 60  # the documented limit of one attempt, end to end
# Response headers kept in a history message. The message is one Table property (at most 32K UTF-16
# characters); a target may send up to 100 header lines of 64 KiB, and a message too large to store
# fails the history write, so the attempt would be redelivered and the action run again.
MAX_HEADER_CHARS = 8192
MAX_REASON_CHARS = 256  # a reason phrase may fill a 64 KiB status line; the old service's are a few words
_RESERVED = frozenset(
    {
        "x-ms-scheduler-jobid",
        "x-ms-scheduler-jobcollectionid",
        "x-ms-scheduler-expected-execution-time",
        "x-ms-scheduler-execution-region",
        "x-ms-execution-tag",
        "x-ms-client-request-id",
        "x-ms-scheduler-attempt",
        "idempotency-key",
    }
)


def scheduler_headers(context: ExecutionContext) -> dict[str, str]:
    """The metadata every outbound call carries; users cannot override these."""
    return {
        "x-ms-scheduler-jobid": context.job.job,
        "x-ms-scheduler-jobcollectionid": context.job.collection,
        "x-ms-scheduler-expected-execution-time": format_utc(context.expected_execution_time),
        "x-ms-scheduler-execution-region": context.region,
        "x-ms-execution-tag": context.execution_id,
        "x-ms-client-request-id": context.client_request_id,
        "x-ms-scheduler-attempt": str(context.attempt + 1),
    }


def outgoing_headers(request: HttpRequest, context: ExecutionContext) -> dict[str, str]:
    """The job's headers (without framing ones, or names the scheduler sets), then the scheduler's own."""
    ours = {name.lower() for name in context.extra_headers} | _RESERVED
    headers = {k: v for k, v in (request.headers or {}).items() if k.lower() not in ours and not is_framing_header(k)}
    headers.update(scheduler_headers(context))
    # The occurrence's identity (docs/execution.md, "One identity per occurrence"): the same on every retry
    # and redelivery of the occurrence, so a target can drop a repeat (the IETF Idempotency-Key header).
    headers["Idempotency-Key"] = context.execution_id
    headers.update(context.extra_headers)  # e.g. traceparent: added by the scheduler, never by a job
    return headers


class AuthenticationRefused(Exception):
    """Authentication could not be prepared; the attempt fails with this (secret-free) message."""


class HttpTarget:
    """Runs Http/Https actions as coroutines (`run_async`; `run` for callers without an event loop). Every
    attempt has its own connection; the caches are safe to share between threads and event loops.

    `timeout` (seconds for the whole attempt) and `cafile` (the trust store for HTTPS targets, default:
    the setting SCHEDULER_TRUSTED_CA_FILE, else requests' CA bundle) are injectable so a deployment or a
    test can choose them. `lookups`: where names are looked up (outbound.py `exchange`).
    """

    def __init__(
        self,
        settings: Settings,
        timeout: float = TIMEOUT_SECONDS,
        cafile: str | None = None,
        lookups: Executor | None = None,
    ) -> None:
        self.settings = settings
        self.timeout = timeout
        self.cafile = cafile or settings.trusted_ca_file or DEFAULT_CA_BUNDLE_PATH
        self.trust = ssl.create_default_context(cafile=self.cafile)
        self._certificates = ContextCache(self.cafile)
        self.lookups = lookups
        self.tokens = TokenCache(settings.aad_authority_host, settings.private_targets, self.trust, lookups=lookups)
        self.identity = ManagedIdentityTokens(settings.identity_audiences)

    def close(self) -> None:
        """Close the managed identity's connections (the runtime's close)."""
        self.identity.close()

    async def send(
        self,
        prepared: requests.PreparedRequest,
        ssl_context: ssl.SSLContext,
        deadline: Deadline,
        before_send: Callable[[], Awaitable[None]] | None = None,
    ) -> Reply:
        """One prepared request through the egress guard (outbound.exchange); ValueError for a URI that is not
        absolute http(s). The action and its polls (polling.py) both go through here; `before_send` is awaited
        right before the request is written (ExecutionContext.before_send)."""
        parts = urlsplit(prepared.url or "")
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an absolute http(s) URI")
        # requests types header values as str | bytes; bytes would only come from an auth plugin.
        sent = {k: v if isinstance(v, str) else v.decode("latin-1") for k, v in prepared.headers.items()}
        return await exchange(
            prepared.method or "GET",
            scheme,
            parts.hostname,
            parts.port or (443 if scheme == "https" else 80),
            prepared.path_url,
            sent,
            prepared.body if isinstance(prepared.body, bytes) else None,
            private_targets=self.settings.private_targets,
            ssl_context=ssl_context,
            deadline=deadline,
            max_body=MAX_BODY_BYTES,
            before_send=before_send,
            lookups=self.lookups,
        )

    def run(self, action: Action, context: ExecutionContext) -> ActionResult:
        """`run_async` in an event loop of its own (tools, tests)."""
        return asyncio.run(self.run_async(action, context))

    async def run_async(self, action: Action, context: ExecutionContext) -> ActionResult:
        request = action.request
        assert request is not None, "validation guarantees an Http action has a request"
        host = urlsplit(request.uri).hostname or ""
        headers = outgoing_headers(request, context)
        deadline = Deadline(self.timeout)
        try:
            ssl_context, auth = await self.authenticate(request, headers, deadline)
            prepared = requests.Request(
                request.method.upper(),
                request.uri,
                headers=headers,
                data=(request.body or "").encode("utf-8"),
                auth=auth,
            ).prepare()
            reply = await self.send(prepared, ssl_context, deadline, context.before_send)
        except AuthenticationRefused as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' could not be authenticated: {exc}")
        except TargetRefused as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' was refused: {exc}")
        except OutboundError as exc:
            if exc.timed_out:
                timed_out = f"Http Action - Request to host '{host}' timed out after {self.timeout:g} s"
                return ActionResult(False, timed_out, unreachable=True)
            if exc.responded:
                broke = f"Http Action - Response from host '{host}' broke off: {exc.cause}"
                return ActionResult(False, broke, unreachable=True)
            return ActionResult(False, f"Http Action - Request to host '{host}' failed: {exc.cause}", unreachable=True)
        except (ValueError, requests.RequestException) as exc:  # a URI requests cannot parse; no secret in it
            return ActionResult(False, f"Http Action - Request to host '{host}' is invalid: {type(exc).__name__}")
        described = describe_response(host, reply)
        try:
            accepted = accepted_work(request.uri, reply) if request.async_completion is not None else None
        except UnusableLocation as exc:  # the work cannot be followed: the attempt fails, recorded, never again
            return ActionResult(False, f"{not_pollable(host, exc)} {described}")
        return ActionResult(200 <= reply.status < 300, described, accepted, *_pushed_back(reply))

    async def authenticate(
        self, request: HttpRequest, headers: dict[str, str], deadline: Deadline
    ) -> tuple[ssl.SSLContext, HTTPBasicAuth | None]:
        authentication = request.authentication
        kind = authentication.type if authentication is not None else HttpAuthenticationType.NOT_SPECIFIED
        if authentication is None or kind == HttpAuthenticationType.NOT_SPECIFIED:
            return self.trust, None
        if kind == HttpAuthenticationType.BASIC:
            return self.trust, HTTPBasicAuth(authentication.username or "", authentication.password or "")
        if kind == HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH:
            try:
                token = await self.tokens.token(
                    authentication.tenant or "",
                    authentication.client_id or "",
                    authentication.secret or "",
                    authentication.audience or "",
                    deadline,
                )
            except TokenError as exc:
                raise AuthenticationRefused(
                    f"no ActiveDirectoryOAuth token for tenant '{authentication.tenant}': {exc}"
                ) from exc
            headers["Authorization"] = f"Bearer {token}"
            return self.trust, None
        if kind == HttpAuthenticationType.MANAGED_IDENTITY:
            try:
                token = await self.identity.token(authentication.audience or "", authentication.client_id, deadline)
            except TokenError as exc:
                raise AuthenticationRefused(
                    f"no ManagedIdentity token for audience '{authentication.audience}': {exc}"
                ) from exc
            headers["Authorization"] = f"Bearer {token}"
            return self.trust, None
        if kind == HttpAuthenticationType.CLIENT_CERTIFICATE:
            try:
                _, ssl_context = self._certificates.get(authentication.pfx or "", authentication.password or "")
            except CertificateError as exc:
                raise AuthenticationRefused(f"ClientCertificate: {exc}") from exc
            return ssl_context, None
        raise AuthenticationRefused(f"authentication type {kind.value} is not supported")


def _pushed_back(reply: Reply) -> tuple[PushBack | None, bool]:
    """A 429 or 503 is the target pushing back (with its Retry-After); another 5xx counts for its circuit."""
    if reply.status in PUSHBACK_STATUSES:
        found = next((value for name, value in reply.headers if name.lower() == "retry-after"), None)
        return PushBack(reply.status, retry_after(found)), False
    return None, 500 <= reply.status < 600


def not_pollable(host: str, exc: UnusableLocation) -> str:
    return f"Http Action - Host '{host}' accepted the work (202 Accepted), but it cannot be polled: {exc}."


def describe_response(host: str, reply: Reply) -> str:
    """The history message: reason (cut to MAX_REASON_CHARS), headers (cut to MAX_HEADER_CHARS) and body (cut to
    MAX_BODY_BYTES); bytes of the reason and headers that were not UTF-8 become U+FFFD, as the body's do."""
    reason = reply.reason or str(reply.status)
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS] + "..."
    headers = ", ".join(f"{k}: {v}" for k, v in reply.headers)
    if len(headers) > MAX_HEADER_CHARS:
        headers = headers[:MAX_HEADER_CHARS] + "..."
    return (
        f"Http Action - Response from host '{host}': '{_unicode(reason)}' Response Headers: {_unicode(headers)} "
        f"Body: {truncate_body(reply.body)}"
    )


def _unicode(text: str) -> str:
    """The text as a Table property can hold it: the header parser keeps bytes that are not UTF-8 as surrogate
    escapes, which no UTF-8 writer takes (the history write would fail, and the attempt run again)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate no byte was escaped to
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
