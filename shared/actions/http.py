"""Http and Https actions: one request with `requests`, pooled, 60 s timeout, redirects not followed.

Success is a 2xx status; 3xx/4xx/5xx, timeouts and connection errors are failures (DECISIONS.md).
"""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from ..model import HttpAuthenticationType, JobErrorAction, format_utc
from ..settings import Settings
from .base import ActionResult, ExecutionContext, truncate_body
from .network import TargetRefused, check_target

TIMEOUT_SECONDS = 60
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


class HttpTarget:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._local = threading.local()

    @property
    def session(self) -> requests.Session:
        # One pooled session per worker thread: requests.Session is not documented as thread-safe.
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.mount("http://", HTTPAdapter(pool_connections=16, pool_maxsize=16))
            session.mount("https://", HTTPAdapter(pool_connections=16, pool_maxsize=16))
            self._local.session = session
        return session

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        request = action.request
        assert request is not None, "validation guarantees an Http action has a request"
        host = urlsplit(request.uri).hostname or ""
        headers = {k: v for k, v in (request.headers or {}).items() if k.lower() not in _RESERVED}
        headers.update(scheduler_headers(context))
        auth = None
        authentication = request.authentication
        if authentication is not None and authentication.type == HttpAuthenticationType.BASIC:
            auth = (authentication.username or "", authentication.password or "")
        try:
            check_target(request.uri, self.settings.allow_private_targets)
            response = self.session.request(
                request.method.upper(), request.uri, headers=headers, data=(request.body or "").encode("utf-8"),
                auth=auth, timeout=TIMEOUT_SECONDS, allow_redirects=False,
            )
        except TargetRefused as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' was refused: {exc}")
        except requests.Timeout:
            return ActionResult(False, f"Http Action - Request to host '{host}' timed out after {TIMEOUT_SECONDS} s")
        except requests.RequestException as exc:
            return ActionResult(False, f"Http Action - Request to host '{host}' failed: {type(exc).__name__}")
        return ActionResult(200 <= response.status_code < 300, describe_response(host, response))


def describe_response(host: str, response: requests.Response) -> str:
    reason = response.reason or str(response.status_code)
    headers = ", ".join(f"{k}: {v}" for k, v in response.headers.items())
    return (
        f"Http Action - Response from host '{host}': '{reason}' Response Headers: {headers} "
        f"Body: {truncate_body(response.content)}"
    )


