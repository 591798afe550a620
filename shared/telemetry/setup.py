"""Turn telemetry on from app settings, once per process (function_app.py calls `configure()` at import).

Where spans and metrics go, first match wins:

- `SCHEDULER_TELEMETRY` = `off` (or `OTEL_SDK_DISABLED` = `true`): nowhere; every hook is a no-op.
- `APPLICATIONINSIGHTS_CONNECTION_STRING`: Application Insights through the Azure Monitor distro
  (`azure-monitor-opentelemetry`). With `APPLICATIONINSIGHTS_AUTHENTICATION_STRING` =
  `Authorization=AAD[;ClientId=<id>]` (the setting the Functions host reads too) it authenticates with the
  managed identity, so the component can keep local (key) authentication disabled. Logs of our own
  `shared.*` loggers are exported too, correlated with the spans.
- `OTEL_EXPORTER_OTLP_ENDPOINT`: an OTLP/HTTP collector (the exporter package is a development dependency;
  without it a warning is logged and telemetry stays off).
- `SCHEDULER_TELEMETRY_CONSOLE` = `true`: spans and metrics printed to stdout (local debugging).
- none of these: off. `make run` and the tests configure nothing, so they pay for no-op hooks only.

What goes to Application Insights is bounded, as its ingestion is billed per GB (docs/cost.md): traces are sampled
at most `SCHEDULER_TELEMETRY_TRACES_PER_SECOND` a second (default 5: every trace of a quiet deployment, a sample of
a busy one's, which Application Insights extrapolates), the logs of an unsampled trace are dropped with it, and the
Azure SDK's own span per storage request (two or three per execution, more than the execution's own) is off unless
`SCHEDULER_TELEMETRY_STORAGE_SPANS` = `true`. Metrics are aggregated before export and never sampled: the occurrence
counts stay exact.

`SCHEDULER_METRICS_PER_JOB` = `true` adds the job's id to the occurrence counts (one time series per job:
for deployments with few jobs, or a short investigation).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry import metrics, trace

from ..settings.storage import parse_connection_string
from .providers import disable, use_providers

log = logging.getLogger(__name__)

AZURE_MONITOR = "azure-monitor"
OTLP = "otlp"
CONSOLE = "console"
# The distro's bundled instrumentations of frameworks this app does not use.
_UNUSED = ("django", "fastapi", "flask", "psycopg2")
STORAGE_SPANS = "azure_sdk"  # the distro's name for the Azure SDK's instrumentation
TRACES_PER_SECOND = 5.0


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _rate(value: str | None) -> float:
    """A positive number of traces a second; anything else is the default (logged: a setting is never ignored
    silently)."""
    if not value:
        return TRACES_PER_SECOND
    try:
        rate = float(value)
    except ValueError:
        rate = 0.0
    if not 0 < rate < float("inf"):
        log.warning(
            "SCHEDULER_TELEMETRY_TRACES_PER_SECOND=%r is not a positive number: %s used", value, TRACES_PER_SECOND
        )
        return TRACES_PER_SECOND
    return rate


def azure_monitor_options(settings: TelemetrySettings) -> dict[str, object]:
    """The distro's options besides the connection: sampling, and the instrumentations left off."""
    off = (*_UNUSED, *(() if settings.storage_spans else (STORAGE_SPANS,)))
    return {
        "traces_per_second": settings.traces_per_second,
        "enable_trace_based_sampling_for_logs": True,
        "instrumentation_options": {name: {"enabled": False} for name in off},
    }


@dataclass(frozen=True)
class TelemetrySettings:
    enabled: bool = True
    connection_string: str | None = None  # routes telemetry only; never logged all the same
    authentication: str | None = None
    otlp_endpoint: str | None = None
    console: bool = False
    per_job_metrics: bool = False
    traces_per_second: float = TRACES_PER_SECOND
    storage_spans: bool = False

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> TelemetrySettings:
        env = os.environ if env is None else env
        switch = (env.get("SCHEDULER_TELEMETRY") or "").strip().lower()
        return cls(
            enabled=switch not in {"off", "false", "0", "no"} and not _flag(env.get("OTEL_SDK_DISABLED")),
            connection_string=env.get("APPLICATIONINSIGHTS_CONNECTION_STRING") or None,
            authentication=env.get("APPLICATIONINSIGHTS_AUTHENTICATION_STRING") or None,
            otlp_endpoint=env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None,
            console=_flag(env.get("SCHEDULER_TELEMETRY_CONSOLE")),
            per_job_metrics=_flag(env.get("SCHEDULER_METRICS_PER_JOB")),
            traces_per_second=_rate(env.get("SCHEDULER_TELEMETRY_TRACES_PER_SECOND")),
            storage_spans=_flag(env.get("SCHEDULER_TELEMETRY_STORAGE_SPANS")),
        )

    @property
    def destination(self) -> str | None:
        if not self.enabled:
            return None
        if self.connection_string:
            return AZURE_MONITOR
        if self.otlp_endpoint:
            return OTLP
        return CONSOLE if self.console else None


_lock = threading.Lock()
_configured: str | None = None
_done = False


def configure(env: Mapping[str, str] | None = None) -> str | None:
    """Configure the exporter the settings name, once; returns the destination (None: off)."""
    global _configured, _done
    with _lock:
        if _done:
            return _configured
        _done = True
        settings = TelemetrySettings.from_environment(env)
        try:
            _configured = _start(settings)
        except Exception:  # telemetry must never keep the scheduler from starting
            log.exception("telemetry could not be configured; it stays off")
            _configured = None
        if _configured is None:
            disable()
        return _configured


def _start(settings: TelemetrySettings) -> str | None:
    destination = settings.destination
    if destination == AZURE_MONITOR:
        from azure.monitor.opentelemetry import configure_azure_monitor

        configure_azure_monitor(
            connection_string=settings.connection_string,
            credential=credential_from(settings.authentication),
            logger_name="shared",
            **azure_monitor_options(settings),
        )
        use_providers(trace.get_tracer_provider(), metrics.get_meter_provider(), per_job=settings.per_job_metrics)
    elif destination in {OTLP, CONSOLE}:
        tracer_provider, meter_provider = _sdk_providers(destination)
        if tracer_provider is None or meter_provider is None:
            return None
        use_providers(tracer_provider, meter_provider, per_job=settings.per_job_metrics)
    return destination


def credential_from(authentication: str | None) -> object | None:
    """The managed identity named by APPLICATIONINSIGHTS_AUTHENTICATION_STRING, as the Functions host reads it."""
    if not authentication:
        return None
    parts = {key.lower(): value for key, value in parse_connection_string(authentication).items()}
    if parts.get("authorization", "").upper() != "AAD":
        return None
    from azure.identity import ManagedIdentityCredential

    client_id = parts.get("clientid")
    return ManagedIdentityCredential(client_id=client_id) if client_id else ManagedIdentityCredential()


def _sdk_providers(destination: str) -> tuple[trace.TracerProvider | None, metrics.MeterProvider | None]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, MetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    span_exporter: SpanExporter
    metric_exporter: MetricExporter
    if destination == OTLP:
        try:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry-exporter-otlp-proto-http is not "
                "installed; telemetry stays off"
            )
            return None, None
        span_exporter, metric_exporter = OTLPSpanExporter(), OTLPMetricExporter()  # both read OTEL_EXPORTER_OTLP_*
    else:
        span_exporter, metric_exporter = ConsoleSpanExporter(), ConsoleMetricExporter()
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "azure-scheduler-successor"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    meter_provider = MeterProvider(resource=resource, metric_readers=[PeriodicExportingMetricReader(metric_exporter)])
    return tracer_provider, meter_provider
