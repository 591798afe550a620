"""Http and Https actions: one request with `requests`, pooled, 60 s timeout, redirects not followed.

Success is a 2xx status; 3xx/4xx/5xx, timeouts and connection errors are failures (DECISIONS.md).
Requests go straight through a pooled adapter, not a `requests.Session`: a session would carry
cookies and environment proxies from one job to the next. Authentication: Basic, ClientCertificate
(client_certificate.py) and ActiveDirectoryOAuth (oauth.py). Every new connection is checked
against the private-target policy (network.py).
"""

from __future__ import annotations

import ssl
import threading
from urllib.parse import urlsplit

import requests
from requests.auth import HTTPBasicAuth
from requests.utils import DEFAULT_CA_BUNDLE_PATH

from ..model import HttpAuthenticationType, HttpRequest, format_utc
from ..model import JobErrorAction as Action
from ..settings import Settings
from .base import MAX_BODY_BYTES, ActionResult, ExecutionContext, truncate_body
from .client_certificate import CertificateError, ContextCache
from .network import GuardedAdapter, TargetRefused
from .oauth import TokenCache, TokenError

TIMEOUT_SECONDS = 60
# Response headers kept in a history message. The message is one Table property (at most 32K UTF-16
# characters); a target may send up to 100 header lines of 64 KiB, and a message too large to store
# fails the history write, so the attempt would be redelivered and the action run again.
MAX_HEADER_CHARS = 8192
_RESERVED = frozenset({
    "x-ms-scheduler-jobid", "x-ms-scheduler-jobcollectionid", "x-ms-scheduler-expected-execution-time",
    "x-ms-scheduler-execution-region", "x-ms-execution-tag", "x-ms-client-request-id", "x-ms-scheduler-attempt",
})


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


class _Refused(Exception):
    """Authentication could not be prepared; the attempt fails with this (secret-free) message."""


class HttpTarget:
    """Runs Http/Https actions. Thread-safe: urllib3 pools are, and the caches take locks.

    `timeout` (seconds, connect and per read) and `cafile` (the trust store for HTTPS targets,
    default: requests' CA bundle) are injectable so a deployment or a test can choose them.
    """

    def __init__(self, settings: Settings, timeout: float = TIMEOUT_SECONDS, cafile: str | None = None) -> None:
        self.settings = settings
        self.timeout = timeout
        self.cafile = cafile or DEFAULT_CA_BUNDLE_PATH
        self._plain = GuardedAdapter(settings.allow_private_targets, ssl.create_default_context(cafile=self.cafile))
        self._certificates = ContextCache(self.cafile)
        self._certificate_adapters: dict[str, GuardedAdapter] = {}
        self._lock = threading.Lock()
        self.tokens = TokenCache(settings.aad_authority_host)

    def run(self, action: Action, context: ExecutionContext) -> ActionResult:
        request = action.request
        assert request is not None, "validation guarantees an Http action has a request"
        host = urlsplit(request.uri).hostname or ""
        headers = {k: v for k, v in (request.headers or {}).items() if k.lower() not in _RESERVED}
        headers.update(scheduler_headers(context))
        try:
            adapter, auth = self._authenticate(request, headers)
            prepared = requests.Request(
                request.method.upper(), request.uri, headers=headers, data=(request.body or "").encode("utf-8"),
                auth=auth,
            ).prepare()
            response = adapter.send(prepared, stream=True, timeout=self.timeout, verify=True)
        except _Refused as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' could not be authenticated: {exc}")
        except TargetRefused as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' was refused: {exc}")
        except requests.Timeout:
            return ActionResult(False, f"Http Action - Request to host '{host}' timed out after {self.timeout:g} s")
        except requests.RequestException as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' failed: {_cause(exc)}")
        except ValueError as exc:  # e.g. a URI requests cannot parse; its text never holds our secrets
            return ActionResult(False, f"Http Action - Request to host '{host}' is invalid: {type(exc).__name__}")
        with response:
            try:
                body = _read_prefix(response)
            except requests.RequestException as exc:
                return ActionResult(False, f"Http Action - Response from host '{host}' broke off: {_cause(exc)}")
        return ActionResult(200 <= response.status_code < 300, describe_response(host, response, body))

    def _authenticate(
        self, request: HttpRequest, headers: dict[str, str]
    ) -> tuple[GuardedAdapter, HTTPBasicAuth | None]:
        authentication = request.authentication
        kind = authentication.type if authentication is not None else HttpAuthenticationType.NOT_SPECIFIED
        if authentication is None or kind == HttpAuthenticationType.NOT_SPECIFIED:
            return self._plain, None
        if kind == HttpAuthenticationType.BASIC:
            return self._plain, HTTPBasicAuth(authentication.username or "", authentication.password or "")
        if kind == HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH:
            try:
                token = self.tokens.token(authentication.tenant or "", authentication.client_id or "",
                                          authentication.secret or "", authentication.audience or "")
            except TokenError as exc:
                raise _Refused(f"no ActiveDirectoryOAuth token for tenant '{authentication.tenant}': {exc}") from exc
            headers["Authorization"] = f"Bearer {token}"
            return self._plain, None
        if kind == HttpAuthenticationType.CLIENT_CERTIFICATE:
            try:
                key, ssl_context = self._certificates.get(authentication.pfx or "", authentication.password or "")
            except CertificateError as exc:
                raise _Refused(f"ClientCertificate: {exc}") from exc
            return self._certificate_adapter(key, ssl_context), None
        raise _Refused(f"authentication type {kind.value} is not supported")

    def _certificate_adapter(self, key: str, ssl_context: ssl.SSLContext) -> GuardedAdapter:
        with self._lock:
            adapter = self._certificate_adapters.get(key)
            if adapter is None or adapter.ssl_context is not ssl_context:
                if len(self._certificate_adapters) >= self._certificates.size:
                    self._certificate_adapters.pop(next(iter(self._certificate_adapters))).close()
                adapter = GuardedAdapter(self.settings.allow_private_targets, ssl_context, pool_size=4)
                self._certificate_adapters[key] = adapter
            return adapter


def _read_prefix(response: requests.Response) -> bytes:
    """At most MAX_BODY_BYTES of the body: history keeps no more, and a huge body must not fill memory."""
    body = b""
    for chunk in response.iter_content(chunk_size=MAX_BODY_BYTES):
        body += chunk
        if len(body) >= MAX_BODY_BYTES:
            break
    return body[:MAX_BODY_BYTES]


def _cause(exc: BaseException) -> str:
    """The exception's type and, for TLS, the OpenSSL reason; never its text, which may quote the URI."""
    seen: object = exc
    for _ in range(8):  # requests wraps urllib3, which wraps the socket error: a short chain
        if isinstance(seen, ssl.SSLError):
            return f"{type(exc).__name__} ({seen.reason or type(seen).__name__})"
        if not isinstance(seen, BaseException):
            break
        reason = getattr(seen, "reason", None)
        wrapped = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
        seen = reason if isinstance(reason, BaseException) else seen.__cause__ or wrapped or seen.__context__
    return type(exc).__name__


def describe_response(host: str, response: requests.Response, body: bytes) -> str:
    """The history message: reason, headers (cut to MAX_HEADER_CHARS) and body (cut to MAX_BODY_BYTES)."""
    reason = response.reason or str(response.status_code)
    headers = ", ".join(f"{k}: {v}" for k, v in response.headers.items())
    if len(headers) > MAX_HEADER_CHARS:
        headers = headers[:MAX_HEADER_CHARS] + "..."
    return (
        f"Http Action - Response from host '{host}': '{reason}' Response Headers: {headers} "
        f"Body: {truncate_body(body)}"
    )
