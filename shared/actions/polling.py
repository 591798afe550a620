"""One poll of an asynchronous target's work (request.asyncCompletion), as ARM clients poll: `GET` of the 202's
Location, or of its Azure-AsyncOperation, whose body's `status` then decides
(docs/decisions.md, "Overlap, limits, long-running completion, spread").

A poll goes through the same egress guard as the action (outbound.py: vetting, pinning, the private-target policy,
the 60 s deadline, the response cap) and carries the occurrence's identity (its x-ms-scheduler-* headers,
x-ms-execution-tag, Idempotency-Key). The job's own headers and its authentication go only to the action's origin
(scheme, host and port): a Location elsewhere gets neither, so a target cannot send the job's credentials to
another host by naming it.

What a poll says (`Polled`): the work goes on (202, or an operation still in progress: poll again, following a
new Location and Retry-After), or it ended: any other 2xx (an operation's `Succeeded`) is success; 3xx, 4xx, 5xx
(an operation's `Failed` or `Canceled`) failure. A poll that cannot connect or times out is asked again (the work
may well go on); a refused address (the guard) fails the work at once, since asking again cannot change it.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from requests.auth import HTTPBasicAuth

from ..model import JobErrorAction as Action
from .accepted import UnusableLocation, accepted_work
from .base import Accepted, ExecutionContext
from .http import (
    AuthenticationRefused,
    HttpTarget,
    describe_response,
    not_pollable,
    outgoing_headers,
    scheduler_headers,
)
from .network import TargetRefused
from .outbound import Deadline, OutboundError

_FAILED = {"failed", "canceled", "cancelled"}


@dataclass(frozen=True)
class Polled:
    """What one poll found: `again` (the work goes on: poll `again.location` after `again.retry_after`) or the
    work's end, `succeeded` or not; `message` for its history."""

    succeeded: bool
    message: str
    again: Accepted | None = None


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


async def poll(target: HttpTarget, action: Action, context: ExecutionContext, accepted: Accepted) -> Polled:
    """GET `accepted.location` once and say what it found."""
    request = action.request
    assert request is not None, "validation guarantees an Http action has a request"
    url = accepted.location
    host = urlsplit(url).hostname or ""
    deadline = Deadline(target.timeout)
    ssl_context: ssl.SSLContext = target.trust
    auth: HTTPBasicAuth | None = None
    if origin(url) == origin(request.uri):
        headers = outgoing_headers(request, context)
        try:
            ssl_context, auth = await target.authenticate(request, headers, deadline)
        except AuthenticationRefused as exc:  # the work may go on: ask again (a token endpoint may come back)
            return Polled(False, f"Http Action - Polling host '{host}' could not be authenticated: {exc}", accepted)
    else:
        headers = {**scheduler_headers(context), "Idempotency-Key": context.execution_id, **context.extra_headers}
    try:
        prepared = requests.Request("GET", url, headers=headers, auth=auth).prepare()
        reply = await target.send(prepared, ssl_context, deadline, context.before_send)
    except TargetRefused as exc:
        return Polled(False, f"Http Action - Polling the operation at host '{host}' was refused: {exc}")
    except OutboundError as exc:  # the work may go on: ask again
        again = Accepted(url, accepted.operation, None)
        return Polled(False, f"Http Action - Polling host '{host}' failed: {exc.cause}", again)
    except (ValueError, requests.RequestException) as exc:
        return Polled(False, f"Http Action - The operation's URL at host '{host}' is invalid: {type(exc).__name__}")
    described = describe_response(host, reply)
    if accepted.operation and 200 <= reply.status < 300:
        return _operation(url, host, reply.body, described)
    if reply.status == 202:
        try:
            later = accepted_work(url, reply)  # a relative address is relative to the URL that answered
        except UnusableLocation as exc:  # the work can no longer be followed: it ends, failed
            return Polled(False, f"{not_pollable(host, exc)} {described}")
        if later is None:  # no new address: the same one again
            later = Accepted(url, accepted.operation, None)
        return Polled(False, described, later)
    return Polled(200 <= reply.status < 300, described)


def _operation(url: str, host: str, body: bytes, described: str) -> Polled:
    """An Azure-AsyncOperation answer: its body's `status` decides; anything else is still in progress."""
    try:
        status = str(json.loads(body).get("status", ""))
    except (ValueError, AttributeError, RecursionError):  # not JSON, not an object, nested past the parser's depth
        status = ""
    if status.lower() == "succeeded":
        return Polled(True, described)
    if status.lower() in _FAILED:
        return Polled(False, described)
    return Polled(False, described, Accepted(url, True, None))
