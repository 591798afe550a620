"""The month of a deployment with nothing due: what it costs whatever runs, and what its idle polling adds.

Contract:
- `idle_fixed` prices a 30-day month of the items that do not follow executions: the always-ready baseline, the
  availability test runs and the alert rules (infra, read into `Deployment`).
- `idle_month` adds the idle bench's meters (bench `idle`, phase `idle`, per hour) x 720 hours: invocations with
  the availability test's health calls, storage transactions, host time (both models) and telemetry, less the
  month's free ingestion. Missing inputs are named, never guessed (bench/cost_inputs.py).
"""

from __future__ import annotations

from bench.cost_inputs import Inputs
from bench.cost_lines import (
    MONTH_HOURS,
    MONTH_S,
    Line,
    Load,
    cores,
    executions_line,
    host_time_line,
    line,
    min_period,
    num,
    storage_lines,
    times,
)
from bench.cost_telemetry import TelemetryModel, sampled_fraction, telemetry_line
from shared.telemetry import ALL_METRICS

FUNCTION_GROUPS_AT_IDLE = 2  # the minute timer and the dispatch trigger scale apart (per-function scaling)


def idle_fixed(inputs: Inputs) -> list[Line]:
    """What a month costs whatever runs: the always-ready baseline, the availability test and the alert rules."""
    d = inputs.deployment
    key = "functions.always_ready_baseline_per_gb_s"
    price = inputs.price(key)
    lines = [
        line(
            inputs,
            "always-ready baseline",
            f"{d.always_ready} x {d.instance_gb:g} GB x {MONTH_S:,} s x ${_n(price)}/GB-s",
            times(d.always_ready * d.instance_gb * MONTH_S, price),
            [key],
        )
    ]
    tests = d.availability_locations * 3600 / d.availability_frequency_s * MONTH_HOURS
    key = "monitor.standard_test_per_execution"
    price = inputs.price(key)
    lines.append(
        line(
            inputs,
            "availability test runs",
            f"{d.availability_locations} locations every {d.availability_frequency_s} s: {tests:,.0f} x ${_n(price)}",
            times(tests, price),
            [key],
        )
    )
    for minutes in sorted(set(d.log_alert_minutes)):
        count = d.log_alert_minutes.count(minutes)
        key = f"monitor.log_alert_rule_{minutes}min_per_month"
        price = inputs.price(key)
        lines.append(
            line(
                inputs,
                f"log alert rules every {minutes} min",
                f"{count} x ${_n(price)} (one time series each)",
                times(count, price),
                [key],
            )
        )
    key = "monitor.metric_alert_time_series_per_month"
    price = inputs.price(key)
    lines.append(
        line(inputs, "metric alert rule", f"{d.metric_alerts} x ${_n(price)}", times(d.metric_alerts, price), [key])
    )
    free = inputs.platform("monitor.free_retention_days")
    if free is not None and d.log_retention_days > free:
        inputs.miss(f"prices.json monitor.retention_per_gb_month (logRetentionInDays {d.log_retention_days})")
        lines.append(Line("log retention", f"{d.log_retention_days} days > {free} included", None))
    return lines


def idle_month(inputs: Inputs) -> Load:
    """A 30-day month of a deployment with nothing due: the idle bench's meters per hour x 720, plus idle_fixed."""
    load = Load("idle deployment", "a 30-day month", "figures.json idle/idle")
    d, hours = inputs.deployment, float(MONTH_HOURS)
    kinds = inputs.kinds("idle", "idle", "storage_requests_by_kind_per_hour")
    invocations = inputs.figure("idle", "idle", "invocations_per_hour")
    cpu_s = inputs.figure("idle", "idle", "host_cpu_s_per_hour")
    health = d.availability_locations * 3600 / d.availability_frequency_s  # GET /api/health calls an hour
    calls = None if invocations is None else invocations + health
    load.lines.append(executions_line(inputs, calls, hours))
    load.lines += storage_lines(inputs, kinds, hours, load.source)
    n_cores, period = cores(inputs), min_period(inputs)
    cpu = None
    if cpu_s is not None and n_cores and period is not None:
        cpu = max(cpu_s / n_cores, (FUNCTION_GROUPS_AT_IDLE * 60 + health) * period)
    busy = times(calls, period)
    load.lines.append(
        host_time_line(
            inputs,
            "host time",
            cpu,
            hours,
            "max(CPU s / cores, a 1 s period a minute per function group and per health call)",
            "cpu",
        )
    )
    load.lines.append(host_time_line(inputs, "host time", busy, hours, "a 1 s period per invocation", "busy"))
    # Nothing runs an attempt: the worker's own items are one span per invocation (tick, dispatch task, health
    # call), their storage spans if sent, and the metrics (one item per instrument a minute).
    model = TelemetryModel(spans_per_execution=calls or 0.0, logs_per_execution=0.0, metric_items=len(ALL_METRICS) * 60)
    sampled = sampled_fraction(inputs, None if calls is None else calls / 3600)
    telemetry = telemetry_line(inputs, kinds, calls, None, 1.0, model, sampled)
    free_gb, price = inputs.platform("monitor.free_gb_per_month"), inputs.price("monitor.ingestion_per_gb")
    if telemetry.usd is not None and free_gb is not None and price is not None:
        telemetry.usd = max(0.0, telemetry.usd * hours - float(free_gb) * price)
        telemetry.formula += f"; x {hours:,.0f} h, less {free_gb} GB free"
    load.lines.append(telemetry)
    load.lines += idle_fixed(inputs)
    return load


def _n(value: float | None) -> str:
    return "?" if value is None else num(value)
