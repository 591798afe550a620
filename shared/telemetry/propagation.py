"""W3C trace context (`traceparent`) in and out: occurrence messages, Http actions, Service Bus messages.

Only `traceparent` is carried (no `tracestate`, no baggage): it is all a target needs to correlate, and it
never holds anything but ids and a sampling flag, so it is safe in a message or a header.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACEPARENT = "traceparent"
_PROPAGATOR = TraceContextTextMapPropagator()


def current_traceparent() -> str | None:
    """The `traceparent` of the current span, or None when there is none (telemetry off)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get(TRACEPARENT)


def context_from(traceparent: str | None) -> otel_context.Context | None:
    """A parent context from a received `traceparent`; None when absent or malformed (a new trace starts)."""
    if not traceparent:
        return None
    extracted = _PROPAGATOR.extract({TRACEPARENT: traceparent})
    return extracted if trace.get_current_span(extracted).get_span_context().is_valid else None


def context_from_headers(headers: Mapping[str, str]) -> otel_context.Context | None:
    """The parent context of an incoming HTTP request (header names in any case)."""
    for name, value in headers.items():
        if name.lower() == TRACEPARENT:
            return context_from(value)
    return None


def outgoing_headers() -> dict[str, str]:
    """Headers for the scheduler's own outbound call: `traceparent` of the current span, if any."""
    traceparent = current_traceparent()
    return {TRACEPARENT: traceparent} if traceparent else {}
