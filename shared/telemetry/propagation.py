"""W3C trace context (`traceparent`) in and out: occurrence messages, Http actions, Service Bus messages.

Only `traceparent` is carried (no `tracestate`, no baggage): it is all a target needs to correlate, and it
never holds anything but ids and a sampling flag, so it is safe in a message or a header.

What the scheduler sends to a target always has one (`outgoing_headers`): the current span's, or, with no
span (telemetry off), a fresh trace id with the sampled flag off, since nothing records it.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACEPARENT = "traceparent"
_PROPAGATOR = TraceContextTextMapPropagator()
_IDS = RandomIdGenerator()


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


def new_traceparent() -> str:
    """A `traceparent` of a trace nothing records: fresh trace and span ids, sampled flag off."""
    unrecorded = NonRecordingSpan(
        SpanContext(
            _IDS.generate_trace_id(),
            _IDS.generate_span_id(),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.DEFAULT),
        )
    )
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(unrecorded))
    return carrier[TRACEPARENT]


def outgoing_headers() -> dict[str, str]:
    """Headers for the scheduler's own outbound call: `traceparent` of the current span, or a fresh one."""
    return {TRACEPARENT: current_traceparent() or new_traceparent()}
