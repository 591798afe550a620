"""The one interface every action target implements, and what an attempt reports back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from ..keys import JobKey
from ..model import JobErrorAction
from ..telemetry.propagation import TRACEPARENT, outgoing_headers

# The old service kept at most this much of a response body in history.
MAX_BODY_BYTES = 2048


@dataclass(frozen=True)
class ExecutionContext:
    """Who is running and why; actions turn it into the x-ms-scheduler-* metadata they send."""

    job: JobKey
    execution_id: str
    expected_execution_time: datetime
    attempt: int  # 0-based retry index; sent as the 1-based x-ms-scheduler-attempt
    region: str
    client_request_id: str  # new for every attempt
    # Headers the scheduler itself adds to an Http action's request beside its x-ms-* metadata (e.g. a
    # W3C `traceparent`); they win over the job's own headers of the same name.
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    # Awaited by an Http action (and a poll) once its connection is made, right before the request is written:
    # the scheduler's pacing of the target's rate limit takes its turn there (outbound.py). None: not paced.
    before_send: Callable[[], Awaitable[None]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Every Http request and Service Bus message carries W3C trace context, telemetry on or off: the
        # attempt's span, or a fresh trace nothing records (sampled flag off). A target correlates by it.
        if not any(name.lower() == TRACEPARENT for name in self.extra_headers):
            object.__setattr__(self, "extra_headers", {**self.extra_headers, **outgoing_headers()})


@dataclass(frozen=True)
class Accepted:
    """An asynchronous target accepted the work (`202 Accepted` to an Http action with request.asyncCompletion):
    where to poll for its end (polling.py) and when."""

    location: str  # absolute URL: the Azure-AsyncOperation when sent, else the Location
    operation: bool  # an Azure-AsyncOperation URL: its body's `status` decides
    retry_after: float | None = None  # seconds, as the target asked (unclamped)


PUSHBACK_STATUSES = frozenset({429, 503})  # Too Many Requests, Service Unavailable: "not now", not "failed"


@dataclass(frozen=True)
class PushBack:
    """The target answered 429 or 503 (or its service's ServerBusy): not now (executor/destinations.py)."""

    status: int
    retry_after: float | None = None  # seconds, as the target asked (unclamped); None: it named none


@dataclass(frozen=True)
class ActionResult:
    succeeded: bool
    message: str  # for history: never contains a secret; response bodies cut to MAX_BODY_BYTES
    accepted: Accepted | None = None  # the work is not done yet: poll it (the attempt's outcome is the work's)
    pushback: PushBack | None = None  # the target asked the scheduler to wait (a failure unless deferred)
    unreachable: bool = False  # a timeout, a refused or broken connection, a 5xx other than 503: the circuit counts it


class ActionTarget(Protocol):
    """A target may also offer `async def run_async(action, context)`, the same attempt as a coroutine: the
    runner then awaits it on its event loop instead of holding a thread for it (shared/actions/__init__.py)."""

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        """Perform one attempt. Never raises for target-side failures: they are a failed ActionResult."""
        ...


def truncate_body(body: bytes) -> str:
    return body[:MAX_BODY_BYTES].decode("utf-8", errors="replace")
