"""Telemetry: OpenTelemetry spans and metrics of the scheduler, and W3C trace context across its hops.

Contract:
- Off unless a destination is configured (setup.py: Application Insights, OTLP, console; `SCHEDULER_TELEMETRY=off`
  forces off). Off means the OpenTelemetry no-op providers: nothing is kept, nothing is sent. A `traceparent`
  goes out all the same (a fresh trace id, sampled flag off), so a target can correlate either way.
- The scheduler calls only the hooks (hooks.py): `traced_api`, `traced_tick`, `traced_dispatch`, `traced_execution`
  (decorators), `attempt_done`, `poisoned`; the occurrence counts (occurrences.py): `occurrence_planned`,
  `occurrence_skipped`; the destinations' (destinations.py): `destination_deferred`, `circuit_changed`; and
  `outgoing_headers` / `current_traceparent` for what it sends.
- Telemetry records only what it is handed: it never reads or writes storage (the dispatcher writes its own
  heartbeat and hands over what it saw).
- A trace runs: API operation or dispatch task -> (occurrence message, field `tp`) -> execution attempt ->
  (`traceparent` header / Service Bus `Diagnostic-Id`) -> the target; a retry is the child of the failed attempt.
- Metric names are in instruments.py; README "Operate it" says what each means.
"""

from .destinations import circuit_changed, destination_deferred
from .hooks import attempt_done, poisoned, traced_api, traced_dispatch, traced_execution, traced_tick
from .instruments import ALL_METRICS
from .occurrences import occurrence_planned, occurrence_skipped
from .propagation import current_traceparent, outgoing_headers
from .providers import disable, use_providers
from .setup import TelemetrySettings, configure

__all__ = [
    "ALL_METRICS",
    "TelemetrySettings",
    "attempt_done",
    "circuit_changed",
    "configure",
    "current_traceparent",
    "destination_deferred",
    "disable",
    "occurrence_planned",
    "occurrence_skipped",
    "outgoing_headers",
    "poisoned",
    "traced_api",
    "traced_dispatch",
    "traced_execution",
    "traced_tick",
    "use_providers",
]
