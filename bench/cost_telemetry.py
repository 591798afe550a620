"""What Application Insights bills for an execution's telemetry, as shared/telemetry/setup.py sends it.

Contract:
- The worker samples traces with the Azure Monitor distro's rate-limited sampler, at most
  `SCHEDULER_TELEMETRY_TRACES_PER_SECOND` a second per worker process, and drops the logs of the traces it does
  not keep; the Azure SDK's span per storage request is sent only with `SCHEDULER_TELEMETRY_STORAGE_SPANS` = true.
  Both come from `Deployment` (infra/modules/functionapp.bicep, else the app's defaults).
- `sampled_fraction(inputs, rate, instances)` is the share of traces kept when `rate` of them start a second,
  spread over `instances` worker processes: min(1, limit x instances / rate). The caller gives the load's rate:
  steady, its executions a second; a herd, its executions over its seconds; sparse, 100 an hour.
- `telemetry_line` scales the worker's spans, logs and storage spans by that share. The host's request and trace
  items are not sampled by the worker (host.json caps the host's traces: `host_trace_cap`, per unit), and metric
  items never are. The host's traces are its "Executing"/"Executed" lines and the worker's log lines it forwards,
  all at Information: none when host.json's logLevel "Function" is Warning or above (`host_function_logs`).
- A setting the model cannot follow (an `OTEL_TRACES_SAMPLER`, which replaces the app's sampler; a value set by an
  expression the Bicep reader cannot resolve) is named in `Inputs.missing`, and the line is unpriced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.cost_inputs import Inputs
from bench.cost_lines import BLOB_READ, BLOB_WRITE, GB, QUEUE_READ, Line, line, num, storage_class

BICEP = "infra/modules/functionapp.bicep"
ITEM = "telemetry (Application Insights)"


@dataclass(frozen=True)
class TelemetryModel:
    """What Application Insights ingests per execution, item by item, before sampling. Envelope sizes: JSON of
    one item as azure-monitor-opentelemetry-exporter 1.0.0b58 serializes it (a span and a log record shaped like
    the executor's, measured 2026-11-29; without the resource's role tags, about 0.1-0.2 KB more each); Microsoft
    bills about 25 % less than the incoming size (learn.microsoft.com/azure/azure-monitor/logs/cost-logs)."""

    span_bytes: float = 1266  # the executor's "execute occurrence" span (CONSUMER, 10 attributes)
    log_bytes: float = 970  # the attempt's INFO line ("Main succeeded attempt 1 of <job>: ...")
    dependency_bytes: float = 862  # one azure-core storage span (a client method or its HTTP request)
    request_bytes: float = 1266  # the host's request item per invocation (not measured: taken as a span's)
    host_trace_bytes: float = 970  # the host's Executing/Executed lines (not measured: taken as a log's)
    metric_bytes: float = 1266  # one exported metric point (not measured: taken as a span's)
    billed_fraction: float = 0.75
    spans_per_execution: float = 1.0  # traced_execution wraps each attempt (shared/executor/attempts.py)
    logs_per_execution: float = 1.0  # the attempt's INFO line, exported by the distro's handler on `shared`
    metric_items: float = 0.0  # per unit; aggregated before export, never sampled
    dependencies_per_request: float = 2.0  # azure-core: a span per client method and one per HTTP request
    host_traces_per_invocation: float = 2.0  # "Executing ..." and "Executed ..." (logLevel Function: Information)


def worker_requests(kinds: Mapping[str, float]) -> float:
    """Requests the Python worker makes (so its azure-core spans exist): all but queue receives and blobs,
    which the Functions host makes itself. The host's deletes of finished messages count here: an over-count."""
    return sum(n for k, n in kinds.items() if storage_class(k) not in (QUEUE_READ, BLOB_READ, BLOB_WRITE))


def _limit(inputs: Inputs) -> float | None:
    """The traces a second one worker process keeps, or None with the reason named."""
    d = inputs.deployment
    if d.worker_sampler is not None:
        inputs.miss(f"{BICEP} OTEL_TRACES_SAMPLER={d.worker_sampler} (replaces the app's sampler: not modelled)")
        return None
    if d.traces_per_second is None:
        inputs.miss(f"{BICEP} SCHEDULER_TELEMETRY_TRACES_PER_SECOND (an expression the model cannot read)")
        return None
    inputs.used[f"{BICEP} SCHEDULER_TELEMETRY_TRACES_PER_SECOND"] = d.traces_per_second
    return d.traces_per_second


def _storage_spans(inputs: Inputs) -> bool | None:
    spans = inputs.deployment.storage_spans
    if spans is None:
        inputs.miss(f"{BICEP} SCHEDULER_TELEMETRY_STORAGE_SPANS (an expression the model cannot read)")
    else:
        inputs.used[f"{BICEP} SCHEDULER_TELEMETRY_STORAGE_SPANS"] = spans
    return spans


def sampled_fraction(inputs: Inputs, rate: float | None, instances: int | None = 1) -> float | None:
    """The share of the worker's traces kept when `rate` start a second over `instances` worker processes (the
    sampler is per process). None when the rate, the instances or the limit is unknown (the last named)."""
    limit = _limit(inputs)
    if limit is None or rate is None or instances is None:
        return None
    return 1.0 if rate <= 0 else min(1.0, limit * instances / rate)


def telemetry_line(
    inputs: Inputs,
    kinds: Mapping[str, float] | None,
    invocations: float | None,
    host_trace_cap: float | None,
    per: float,
    model: TelemetryModel,
    sampled: float | None,
) -> Line:
    """Bytes ingested per unit x the ingestion price: the worker's items x `sampled`, the metric items, and the
    host's items (its traces at most `host_trace_cap` per unit, None: uncapped)."""
    key = "monitor.ingestion_per_gb"
    price = inputs.price(key)
    spans_on = _storage_spans(inputs)
    if kinds is None or invocations is None:
        return Line(ITEM, "needs storage_requests_by_kind and invocations_per_execution", None)
    if sampled is None or spans_on is None:
        return Line(ITEM, "needs the worker's sampling (see Missing inputs)", None)
    deps = worker_requests(kinds) * model.dependencies_per_request if spans_on else 0.0
    worker = model.spans_per_execution * model.span_bytes + model.logs_per_execution * model.log_bytes
    worker = (worker + deps * model.dependency_bytes) * sampled + model.metric_items * model.metric_bytes
    traces = invocations * model.host_traces_per_invocation + model.logs_per_execution  # + the forwarded log
    if not inputs.deployment.host_function_logs:
        traces = 0.0  # host.json keeps the functions' categories at Warning: nothing logged at Information goes
    if host_trace_cap is not None:
        traces = min(traces, host_trace_cap)
    host = invocations * model.request_bytes + traces * model.host_trace_bytes
    billed = (worker + host) * model.billed_fraction
    usd = None if price is None else billed * per / GB * price
    metrics = f" + {num(model.metric_items)} metric items" if model.metric_items else ""
    formula = (
        f"(({num(model.spans_per_execution)} spans + {num(model.logs_per_execution)} logs + {num(deps)} storage "
        f"spans{'' if spans_on else ' (off)'}) x {num(sampled)} sampled{metrics} + {num(invocations)} requests + "
        f"{num(traces)} host traces) = {billed:,.0f} B billed x {per:,.0f} x ${'?' if price is None else num(price)}/GB"
    )
    return line(inputs, ITEM, formula, usd, [key])
