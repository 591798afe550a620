"""Which tracer and meter the hooks use. Off (the OpenTelemetry no-op providers) until configured.

The hooks never read the global providers directly: `use_providers` installs the ones to use (setup.py
after configuring an exporter; a test with the SDK's in-memory exporters), `disable` goes back to the
no-op ones. With the no-op providers every hook costs a few attribute look-ups and nothing is kept.
`per_job` (SCHEDULER_METRICS_PER_JOB) adds the job's id to the occurrence counts.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from opentelemetry import metrics, trace

from .instruments import Instruments

SCOPE = "azure-scheduler-successor"


@dataclass(frozen=True)
class Active:
    tracer: trace.Tracer
    instruments: Instruments
    enabled: bool
    per_job: bool = False


def _build(
    tracer_provider: trace.TracerProvider, meter_provider: metrics.MeterProvider, enabled: bool, per_job: bool = False
) -> Active:
    return Active(tracer_provider.get_tracer(SCOPE), Instruments(meter_provider.get_meter(SCOPE)), enabled, per_job)


_lock = threading.Lock()
_active = _build(trace.NoOpTracerProvider(), metrics.NoOpMeterProvider(), enabled=False)


def active() -> Active:
    return _active


def use_providers(
    tracer_provider: trace.TracerProvider, meter_provider: metrics.MeterProvider, *, per_job: bool = False
) -> None:
    """Send spans and metrics of every hook to these providers from now on."""
    global _active
    with _lock:
        _active = _build(tracer_provider, meter_provider, enabled=True, per_job=per_job)


def disable() -> None:
    """Back to the no-op providers: hooks record nothing."""
    global _active
    with _lock:
        _active = _build(trace.NoOpTracerProvider(), metrics.NoOpMeterProvider(), enabled=False)
