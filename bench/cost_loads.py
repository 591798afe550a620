"""The three loads of docs/cost.md, a million executions each, assembled from line items (cost_lines.py).

Contract:
- `steady`, `herds`, `sparse` price a million executions; the idle month they draw on is bench/cost_idle.py's.
- Each load carries two host-time lines, `cpu` (instance-seconds from the measured host CPU per execution and
  the instance's cores: the instance is taken to execute only while its cores work) and `busy` (the instance is
  billed whenever a function runs on it, which for this app includes a batch's wait for its second); `Load.total`
  gives both totals. A total is None when any of its lines is (see `Inputs.missing`); `Load.priced` is the sum of
  the lines that could be priced, a lower bound then.
- Which figures each load reads: steady = bench `steady`, phase `steady-100` (else the first `steady*`); herds =
  bench `fire`, phases `herd*`; sparse = bench `fire`, the first phase `spread*`, plus bench `idle`, phase `idle`.
- The worker's traces are sampled per executor instance (bench/cost_telemetry.py) at the load's rate: steady, the
  phase's executions a second over its executor instances; a herd, its executions over max(1 s, `lateness_s.max`)
  (they start between the due second and the last arrival); sparse, 100 an hour.
"""

from __future__ import annotations

import math
import re

from bench.cost_idle import idle_fixed, idle_month
from bench.cost_inputs import Inputs
from bench.cost_lines import (
    MILLION,
    MONTH_HOURS,
    MONTH_S,
    QUEUE_WRITE,
    Line,
    Load,
    RowModel,
    cores,
    executions_line,
    host_time_line,
    min_period,
    queue_capacity_line,
    rows_line,
    storage_class,
    storage_lines,
    times,
)
from bench.cost_telemetry import TelemetryModel, sampled_fraction, telemetry_line
from shared.retention import CLAIM_MAX_AGE, HISTORY_MAX_AGE, HISTORY_MAX_ENTRIES
from shared.timings import Timings

SPARSE_PER_HOUR = 100  # the sparse load: 100 jobs an hour, each taken to be an hourly job
STEADY_JOB_PERIOD_S = 60  # bench/steady.py schedules every-minute jobs
SPARSE_JOB_PERIOD_S = 3600
EARLY_S = Timings().early_visibility.total_seconds()  # a batch is taken this long before its second


def _residence_days(period_s: float | None) -> float:
    """How long an execution's history and ledger rows are kept: the newest 1,000 per job, none past 60 days."""
    max_days = HISTORY_MAX_AGE.total_seconds() / 86400
    return max_days if period_s is None else min(HISTORY_MAX_ENTRIES * period_s / 86400, max_days)


def _per_execution(
    inputs: Inputs,
    where: str,
    period_s: float | None,
    trace_cap: float | None,
    kinds: dict[str, float] | None,
    invocations: float | None,
    sampled: float | None,
) -> list[Line]:
    """The lines every load shares, for a million executions (`sampled`: the worker's traces kept)."""
    timings = Timings()
    sends = sum(n for k, n in (kinds or {}).items() if storage_class(k) == QUEUE_WRITE and k.upper().startswith("POST"))
    resident = (timings.early_visibility + timings.backstop_after).total_seconds()
    return [
        executions_line(inputs, invocations, MILLION),
        *storage_lines(inputs, kinds, MILLION, where),
        rows_line(inputs, _residence_days(period_s), CLAIM_MAX_AGE.total_seconds() / 86400, RowModel(), MILLION),
        queue_capacity_line(inputs, sends, resident, RowModel(), MILLION),
        telemetry_line(inputs, kinds, invocations, trace_cap, MILLION, TelemetryModel(), sampled),
    ]


def _rate(inputs: Inputs, phase: str) -> float | None:
    rate = inputs.figure("steady", phase, "rate_per_s", required=False)
    found = re.match(r"steady-(\d+(?:\.\d+)?)", phase)
    if rate is None and found:
        rate = float(found.group(1))
        inputs.used[f"figures.json steady/{phase} (its rate, from the phase's name)"] = rate
    if rate is None:
        inputs.miss(f"figures.json steady/{phase} rate_per_s")
    return rate


def steady(inputs: Inputs) -> Load | None:
    phases = inputs.phases("steady", "steady")
    if not phases:
        inputs.miss("figures.json steady/steady-* (no phase)")
        return None
    phase = "steady-100" if "steady-100" in phases else phases[0]
    load = Load(f"steady ({phase})", "a million executions", f"figures.json steady/{phase}")
    rate, n_cores = _rate(inputs, phase), cores(inputs)
    cpu_ms = inputs.figure("steady", phase, "host_cpu_ms_per_execution")
    cpu = busy = cap = sampled = None
    instances = 0
    if rate and n_cores and cpu_ms is not None:
        cpu = cpu_ms / 1000 / n_cores
        instances = max(1, math.ceil(rate * cpu))
        # The executor's instances and one for the dispatch trigger, both executing all the time at this rate
        # (each function group scales on instances of its own); the timer's second a minute is left out.
        busy = (instances + 1) / rate
        cap = inputs.deployment.host_items_per_s * instances / rate
        sampled = sampled_fraction(inputs, rate, instances)
    kinds = inputs.kinds("steady", phase, "storage_requests_by_kind")
    invocations = inputs.figure("steady", phase, "invocations_per_execution")
    load.lines += _per_execution(inputs, load.source, STEADY_JOB_PERIOD_S, cap, kinds, invocations, sampled)
    load.lines.append(host_time_line(inputs, "host time", cpu, MILLION, "CPU s / cores", "cpu"))
    load.lines.append(
        host_time_line(
            inputs, "host time", busy, MILLION, f"({instances} executor + 1 dispatch) instances busy / rate", "busy"
        )
    )
    millions = None if not rate else rate * MONTH_S / MILLION  # executions a month at this rate
    for item in idle_fixed(inputs):
        share = times(item.usd, None if not millions else 1 / millions)
        formula = f"({item.formula}) / {millions or 0:,.1f} million executions a month"
        load.lines.append(Line(f"fixed share: {item.item}", formula, share, "", item.bound, item.third_party))
    return load


def herds(inputs: Inputs) -> list[Load]:
    loads = []
    n_cores, period = cores(inputs), min_period(inputs)
    for phase in inputs.phases("fire", "herd"):
        load = Load(f"herd ({phase})", "a million executions", f"figures.json fire/{phase}")
        n = inputs.figure("fire", phase, "executions")
        cpu_ms = inputs.figure("fire", phase, "host_cpu_ms_per_execution")
        late = inputs.figure("fire", phase, "lateness_s.max")
        kinds = inputs.kinds("fire", phase, "storage_requests_by_kind")
        invocations = inputs.figure("fire", phase, "invocations_per_execution")
        cpu = busy = sampled = None
        if n and cpu_ms is not None and n_cores and late is not None and period is not None:
            work = n * cpu_ms / 1000 / n_cores  # instance-seconds of CPU for the whole herd
            cpu = max(period, work) / n
            span = EARLY_S + late  # the batches are held from their early visibility to the last attempt
            instances = max(1, math.ceil(work / span))
            # The executor's hold, plus all the CPU again for the dispatch and timer groups' own instances.
            busy = (instances * span + work) / n
            sampled = sampled_fraction(inputs, n / max(1.0, late), instances)
        load.lines += _per_execution(inputs, load.source, None, None, kinds, invocations, sampled)
        load.lines.append(host_time_line(inputs, "host time", cpu, MILLION, "max(1 s, N x CPU s / cores) / N", "cpu"))
        load.lines.append(
            host_time_line(
                inputs,
                "host time",
                busy,
                MILLION,
                f"(instances x ({EARLY_S:g} s early + lateness max) + CPU s / cores) / N",
                "busy",
            )
        )
        load.notes.append("no fixed share: how often herds come is not a figure")
        load.notes.append(
            "telemetry: the sampler keeps more of a herd after a quiet spell than its cap over the herd's seconds"
            " (docs/cost.md): a lower bound"
        )
        loads.append(load)
    if not loads:
        inputs.miss("figures.json fire/herd-* (no phase)")
    return loads


def sparse(inputs: Inputs) -> Load | None:
    phases = inputs.phases("fire", "spread")
    if not phases:
        inputs.miss("figures.json fire/spread-* (no phase)")
        return None
    phase = phases[0]
    load = Load(
        f"sparse ({SPARSE_PER_HOUR} an hour)", "a million executions", f"figures.json fire/{phase} and idle/idle"
    )
    n = inputs.figure("fire", phase, "executions")
    kinds = inputs.kinds("fire", phase, "storage_requests_by_kind")
    invocations = inputs.figure("fire", phase, "invocations_per_execution")
    cpu_ms = inputs.figure("fire", phase, "host_cpu_ms_per_execution")
    seconds = inputs.figure("fire", phase, "seconds", required=False)
    if seconds is not None and n:
        # The phase's meters include the idle work of its own count window, which the idle month prices too.
        share = seconds / 3600 / n
        idle_kinds = inputs.kinds("idle", "idle", "storage_requests_by_kind_per_hour") or {}
        if kinds is not None:
            kinds = {k: max(0.0, v - idle_kinds.get(k, 0.0) * share) for k, v in kinds.items()}
        idle_calls = inputs.figure("idle", "idle", "invocations_per_hour")
        idle_cpu = inputs.figure("idle", "idle", "host_cpu_s_per_hour")
        if invocations is not None and idle_calls is not None:
            invocations = max(0.0, invocations - idle_calls * share)
        if cpu_ms is not None and idle_cpu is not None:
            cpu_ms = max(0.0, cpu_ms - idle_cpu * 1000 * share)
    else:
        load.notes.append(f"fire/{phase} has no `seconds`: its idle work is counted again in the idle month")
    sampled = sampled_fraction(inputs, SPARSE_PER_HOUR / 3600)
    where = f"figures.json fire/{phase}"
    load.lines += _per_execution(inputs, where, SPARSE_JOB_PERIOD_S, None, kinds, invocations, sampled)
    n_cores, period = cores(inputs), min_period(inputs)
    p50 = inputs.figure("fire", phase, "lateness_s.p50")
    cpu = None if cpu_ms is None or not n_cores or period is None else max(period, cpu_ms / 1000 / n_cores)
    busy = None
    if p50 is not None and period is not None and cpu_ms is not None and n_cores:
        busy = max(period, EARLY_S + p50) + cpu_ms / 1000 / n_cores  # the executor's hold, plus the CPU again
    load.lines.append(host_time_line(inputs, "host time", cpu, MILLION, "each execution its own >= 1 s period", "cpu"))
    load.lines.append(
        host_time_line(
            inputs, "host time", busy, MILLION, f"{EARLY_S:g} s early + lateness p50, + the CPU model", "busy"
        )
    )
    months = MILLION / (SPARSE_PER_HOUR * MONTH_HOURS)  # how long a million sparse executions take
    month = idle_month(inputs)
    for model in ("cpu", "busy"):
        item = f"idle deployment for {months:.1f} months"
        load.lines.append(
            Line(
                item,
                f"idle month ({model} model) x {months:.2f}",
                times(month.total(model), months),
                model,
                month.bound(),
            )
        )
    return load
