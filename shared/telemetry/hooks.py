"""The calls the scheduler makes into telemetry: one decorator or call per place, nothing else.

- `traced_api` wraps `api.handle(operation, request, ...)`: a SERVER span per operation (parent: the
  caller's `traceparent`), and `scheduler.api.requests`.
- `traced_tick` wraps the dispatcher's timer work (`fan_out`, or a whole in-process `tick`; the report has
  `tasks`, `enqueued` and `observation`, what the dispatcher's heartbeat saw or None): a span per tick and the
  tick duration, then what the observation says (occurrences.py `tick_observed`). Telemetry writes nothing to
  storage: the dispatcher writes the heartbeat (shared/health.py) and hands over what it saw.
- `traced_dispatch` wraps the dispatch of one task (a minute bucket and shard of the due index; `task` has
  `bucket`, `shard` and the sending tick's `traceparent`): a span, the child of the tick, and the occurrences
  it queued. The occurrence messages it sends carry its span as their parent. A tick's tasks run on
  whichever instance takes them from the dispatch queue.
- `traced_execution` wraps an executor's `run(self, message)`: a CONSUMER span per delivered occurrence
  message, the child of the `traceparent` the message carries (the tick, API call or failed attempt that
  queued it), so one trace runs from a job's write or tick to its target. Outcome `skipped` unless
  `attempt_done` reports the attempt (a duplicate, a deleted job, a disabled collection).
- `attempt_done` records one attempt's outcome, lateness, retry and fault on the current span and metrics,
  and the occurrence's fired / succeeded counts (occurrences.py).
- `poisoned` counts a message parked in the poison queue.

Hooks never raise on their own account; telemetry failures are logged and the scheduler goes on.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar, cast

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .occurrences import occurrence_ran, tick_observed
from .propagation import context_from, context_from_headers
from .providers import active

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

# Span attribute names (README "Operate it").
JOB_ID = "scheduler.job.id"
JOB_NAME = "scheduler.job.name"
COLLECTION = "scheduler.job.collection"
OCCURRENCE = "scheduler.occurrence"
ATTEMPT = "scheduler.attempt"
ACTION = "scheduler.action"
ACTION_TYPE = "scheduler.action.type"
OUTCOME = "scheduler.outcome"
LATENESS_MS = "scheduler.lateness_ms"
EXECUTION_ID = "scheduler.execution_id"
TRIGGER = "scheduler.trigger"
OPERATION = "scheduler.operation"

TICK_SPAN = "dispatcher tick"
DISPATCH_SPAN = "dispatch task"
EXECUTION_SPAN = "execute occurrence"


def traced_api(handle: F) -> F:
    @functools.wraps(handle)
    def wrapper(operation: str, request: Any, *args: Any, **kwargs: Any) -> Any:
        current = active()
        if not current.enabled:
            return handle(operation, request, *args, **kwargs)
        route = getattr(request, "route", None) or {}
        attributes = {OPERATION: operation, "http.request.method": str(getattr(request, "method", ""))}
        if route.get("jobCollectionName"):
            attributes[COLLECTION] = str(route["jobCollectionName"])
        if route.get("jobName"):
            attributes[JOB_NAME] = str(route["jobName"])
        parent = context_from_headers(getattr(request, "headers", None) or {})
        with current.tracer.start_as_current_span(
            operation, context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as span:
            response = handle(operation, request, *args, **kwargs)
            status = int(getattr(response, "status", 0))
            span.set_attribute("http.response.status_code", status)
            if status >= 500:
                span.set_status(Status(StatusCode.ERROR))
            current.instruments.api_requests.add(1, {OPERATION: operation, "status_class": f"{status // 100}xx"})
            return response

    return cast(F, wrapper)


def traced_tick(tick: F) -> F:
    @functools.wraps(tick)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        current = active()
        started = time.perf_counter()
        with current.tracer.start_as_current_span(TICK_SPAN, kind=SpanKind.INTERNAL) as span:
            report = tick(self, *args, **kwargs)
            duration = time.perf_counter() - started
            tasks = int(getattr(report, "tasks", 0))
            span.set_attribute("scheduler.tick.tasks", tasks)
            enqueued = int(getattr(report, "enqueued", 0))
            if enqueued:  # a tick that dispatched in-process; a fan-out's occurrences are on its task spans
                span.set_attribute("scheduler.tick.occurrences", enqueued)
            current.instruments.tick_duration.record(duration)
            observation = getattr(report, "observation", None)
            if observation is not None:  # None: the heartbeat could not be written (the dispatcher logged it)
                span.set_attributes(
                    {
                        "scheduler.backlog": int(observation.backlog),
                        "scheduler.poison_depth": int(observation.poison_depth),
                    }
                )
                tick_observed(observation)
            return report

    return cast(F, wrapper)


def traced_dispatch(dispatch: F) -> F:
    @functools.wraps(dispatch)
    def wrapper(self: Any, task: Any, *args: Any, **kwargs: Any) -> Any:
        current = active()
        if not current.enabled:
            return dispatch(self, task, *args, **kwargs)
        attributes: dict[str, str | int] = {
            "scheduler.bucket": str(getattr(task, "bucket", "")),
            "scheduler.shard": int(getattr(task, "shard", 0)),
        }
        parent = context_from(getattr(task, "traceparent", None))  # the tick's, when the task came by queue
        with current.tracer.start_as_current_span(
            DISPATCH_SPAN, context=parent, kind=SpanKind.INTERNAL, attributes=attributes
        ) as span:
            report = dispatch(self, task, *args, **kwargs)
            counts = {name: int(getattr(report, name, 0)) for name in ("enqueued", "stale", "failed")}
            span.set_attributes({f"scheduler.dispatch.{name}": value for name, value in counts.items()})
            current.instruments.dispatch_occurrences.record(counts["enqueued"])
            return report

    return cast(F, wrapper)


def traced_execution(run: F) -> F:
    """Also for a coroutine function: the span then lives across its awaits (in the task's context)."""

    def span_of(message: Any) -> Any:
        current = active()
        attributes = {
            JOB_ID: message.job.resource_id,
            JOB_NAME: message.job.job,
            COLLECTION: message.job.collection,
            OCCURRENCE: message.occurrence.isoformat(),
            ATTEMPT: message.attempt + 1,
            ACTION: message.action.value,
            TRIGGER: message.trigger.value,
            EXECUTION_ID: message.execution_id,
            OUTCOME: "skipped",
        }
        parent = context_from(getattr(message, "traceparent", None))
        return current.tracer.start_as_current_span(
            EXECUTION_SPAN, context=parent, kind=SpanKind.CONSUMER, attributes=attributes
        )

    if inspect.iscoroutinefunction(run):

        @functools.wraps(run)
        async def awaited(self: Any, message: Any, *args: Any, **kwargs: Any) -> Any:
            if not active().enabled:
                return await run(self, message, *args, **kwargs)
            with span_of(message):
                return await run(self, message, *args, **kwargs)

        return cast(F, awaited)

    @functools.wraps(run)
    def wrapper(self: Any, message: Any, *args: Any, **kwargs: Any) -> Any:
        if not active().enabled:
            return run(self, message, *args, **kwargs)
        with span_of(message):
            return run(self, message, *args, **kwargs)

    return cast(F, wrapper)


def attempt_done(
    message: Any, action_type: Any, succeeded: bool, started: datetime, *, retried: bool, faulted: bool
) -> None:
    """One attempt ran: outcome, lateness (its start minus its expected time), retry and fault."""
    current = active()
    if not current.enabled:
        return
    kind = str(getattr(action_type, "value", action_type))
    outcome = "succeeded" if succeeded else "failed"
    lateness = (started - message.due).total_seconds()
    span = trace.get_current_span()
    span.set_attributes({ACTION_TYPE: kind, OUTCOME: outcome, LATENESS_MS: round(lateness * 1000)})
    if not succeeded:
        span.set_status(Status(StatusCode.ERROR, "the action failed"))
    dimensions = {"outcome": outcome, "action_type": kind, "action": message.action.value}
    current.instruments.executions.add(1, dimensions)
    current.instruments.lateness.record(lateness, {"action_type": kind, "trigger": message.trigger.value})
    if retried:
        current.instruments.retries.add(1, {"action_type": kind})
    if faulted:
        current.instruments.faulted.add(1, {"action_type": kind})
    occurrence_ran(current, message, succeeded)


def poisoned(reason: str) -> None:
    active().instruments.poison_messages.add(1, {"reason": reason})
