"""The cost model of bench/cost.py: each line item's arithmetic, the totals, the goal verdict, and that an absent
input is reported by its name rather than guessed. Fed small figures and prices; the expected values are worked
out here from the formulas docs/cost.md states, not by calling the model's own helpers."""

from __future__ import annotations

import copy
import dataclasses
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.cost import goal, render_cost, replace_block
from bench.cost_idle import idle_month
from bench.cost_inputs import Deployment, Inputs, _logs_information, read_deployment
from bench.cost_lines import (
    BLOB_READ,
    BLOB_WRITE,
    QUEUE_READ,
    QUEUE_WRITE,
    TABLE,
    Line,
    Load,
    RowModel,
    storage_class,
)
from bench.cost_loads import herds, sparse, steady
from bench.cost_telemetry import TelemetryModel
from shared.telemetry.setup import TRACES_PER_SECOND

ROOT = Path(__file__).resolve().parents[2]
MONTH_S = 30 * 24 * 3600

PRICES: dict[str, Any] = {
    "read_on": "2026-11-29",
    "currency": "USD",
    "storage": {"redundancy": "lrs"},
    "prices": {
        "functions.on_demand_execution_per_gb_s": {"usd": 0.00002, "status": "microsoft-docs"},
        "functions.executions_per_million": {"usd": 0.40, "status": "microsoft-docs"},
        "functions.always_ready_baseline_per_gb_s": {"usd": 0.000004, "status": "third-party"},
        "storage.lrs.table_transactions_per_10k": {"usd": 0.0004, "status": "third-party"},
        "storage.lrs.table_capacity_per_gb_month": {"usd": 0.05, "status": "third-party"},
        "storage.lrs.queue_class1_per_10k": {"usd": 0.004, "status": "third-party"},
        "storage.lrs.queue_class2_per_10k": {"usd": 0.002, "status": "third-party"},
        "storage.lrs.queue_capacity_per_gb_month": {"usd": 0.05, "status": "third-party"},
        "monitor.ingestion_per_gb": {"usd": 2.0, "status": "third-party"},
        "monitor.standard_test_per_execution": {"usd": 0.001, "status": "third-party"},
        "monitor.log_alert_rule_5min_per_month": {"usd": 1.5, "status": "third-party"},
        "monitor.metric_alert_time_series_per_month": {"usd": 0.1, "status": "third-party"},
    },
    "platform": {
        "functions.cores_by_instance_memory_mb": {"value": {"2048": 1}},
        "functions.min_billable_period_s": {"value": 1.0},
        "monitor.free_retention_days": {"value": 31},
        "monitor.free_gb_per_month": {"value": 5},
    },
}

FIGURES: dict[str, Any] = {
    "steady": {
        "phases": {
            "steady-100": {
                "executions": 6000,
                "storage_requests_by_kind": {
                    "POST $batch": 0.5,
                    "POST scheduler-occurrences": 0.1,
                    "GET scheduler-occurrences": 0.2,
                },
                "invocations_per_execution": 0.05,
                "host_cpu_ms_per_execution": 2.0,
            }
        }
    },
    "fire": {
        "phases": {
            "herd-1000-0.5s": {
                "executions": 1000,
                "lateness_s": {"p50": 0.5, "p99": 0.9, "max": 1.0},
                "storage_requests_by_kind": {"POST $batch": 0.3},
                "invocations_per_execution": 0.1,
                "host_cpu_ms_per_execution": 3.0,
            }
        }
    },
    "idle": {
        "phases": {
            "idle": {
                "storage_requests_by_kind_per_hour": {"GET scheduler-occurrences": 1000, "GET schedulerDue": 100},
                "invocations_per_hour": 60,
                "host_cpu_s_per_hour": 30,
            }
        }
    },
}

DEPLOYMENT = Deployment(
    instance_memory_mb=2048,
    always_ready=1,
    maximum_instances=40,
    storage_sku="Standard_LRS",
    log_retention_days=30,
    availability_locations=1,
    availability_frequency_s=300,
    log_alert_minutes=(5,),
    metric_alerts=1,
    worker_sampler=None,
    traces_per_second=5.0,
    storage_spans=False,
    host_items_per_s=20.0,
)
TELEMETRY = "telemetry (Application Insights)|"


def inputs(figures: dict[str, Any] | None = None, prices: dict[str, Any] | None = None, **deployment: Any) -> Inputs:
    return Inputs(
        copy.deepcopy(PRICES if prices is None else prices),
        copy.deepcopy(FIGURES if figures is None else figures),
        dataclasses.replace(DEPLOYMENT, **deployment),
    )


def telemetry_usd(billed_bytes: float) -> float:
    """A million executions' telemetry at the fixture's $2/GB, 0.75 of the incoming bytes billed."""
    return billed_bytes * 0.75 * 1e6 / 1e9 * 2.0


def by_item(load: Load) -> dict[str, Line]:
    return {f"{x.item}|{x.alternative}": x for x in load.lines}


def test_steady_line_items_follow_their_formulas():
    load = steady(inputs())
    assert load is not None
    lines = by_item(load)
    assert lines["function executions|"].usd == pytest.approx(0.05 * 0.40)
    assert lines[f"storage: {TABLE}|"].usd == pytest.approx(0.5 * 100 * 0.0004)
    assert lines[f"storage: {QUEUE_WRITE}|"].usd == pytest.approx(0.1 * 100 * 0.004)
    assert lines[f"storage: {QUEUE_READ}|"].usd == pytest.approx(0.2 * 100 * 0.002)
    # Host time: 2 ms of CPU on a 1-core, 2 GB instance; busy: one executor and one dispatch instance at 100/s.
    assert lines["host time|cpu"].usd == pytest.approx(0.002 * 1e6 * 2 * 0.00002)
    assert lines["host time|busy"].usd == pytest.approx(2 / 100 * 1e6 * 2 * 0.00002)
    # Every-minute jobs keep 1,000 history and ledger rows (1,000 minutes); a claim 7 days.
    rows = RowModel()
    kept = (rows.history_bytes + rows.ledger_bytes) * (1000 * 60 / 86400) / 30 + rows.claim_bytes * 7 / 30
    assert lines["table capacity (rows kept)|"].usd == pytest.approx(kept * 1e6 / 1e9 * 0.05)
    # Telemetry: the worker keeps 5 traces a second of 100 (one executor instance), each a span and a log, no
    # storage spans; a host request per invocation, the host's traces capped by its sampling (20 items/s x 1
    # instance / 100 a second).
    t = TelemetryModel()
    worker = (t.span_bytes + t.log_bytes) * 5 / 100
    traces = min(0.05 * 2 + 1, 20 * 1 / 100)
    assert lines[TELEMETRY].usd == pytest.approx(
        telemetry_usd(worker + 0.05 * t.request_bytes + traces * t.host_trace_bytes)
    )
    # The month's fixed costs spread over 100 x 2,592,000 executions.
    millions = 100 * MONTH_S / 1e6
    assert lines["fixed share: always-ready baseline|"].usd == pytest.approx(2 * MONTH_S * 0.000004 / millions)
    assert lines["fixed share: availability test runs|"].usd == pytest.approx(12 * 720 * 0.001 / millions)
    assert lines["fixed share: log alert rules every 5 min|"].usd == pytest.approx(1.5 / millions)
    assert lines["fixed share: metric alert rule|"].usd == pytest.approx(0.1 / millions)


def test_storage_spans_when_on_are_sampled_with_their_trace():
    load = steady(inputs(storage_spans=True))
    assert load is not None
    t = TelemetryModel()
    # Two azure-core spans per request the worker makes: the $batch and the queue send, not the host's receive.
    worker = (t.span_bytes + t.log_bytes + 2 * (0.5 + 0.1) * t.dependency_bytes) * 5 / 100
    host = 0.05 * t.request_bytes + 20 * 1 / 100 * t.host_trace_bytes
    assert by_item(load)[TELEMETRY].usd == pytest.approx(telemetry_usd(worker + host))


def test_a_herd_keeps_the_sampler_cap_over_its_seconds():
    load = herds(inputs())[0]
    t = TelemetryModel()
    # 1,000 executions starting within max(1 s, 1.0 s lateness max) on one instance: 5 of them kept.
    worker = (t.span_bytes + t.log_bytes) * 5 / 1000
    host = 0.1 * t.request_bytes + (0.1 * 2 + 1) * t.host_trace_bytes  # the herd's host traces are not capped
    assert by_item(load)[TELEMETRY].usd == pytest.approx(telemetry_usd(worker + host))


def test_a_sparse_load_keeps_every_trace():
    figures = copy.deepcopy(FIGURES)
    figures["fire"]["phases"]["spread-500"] = {
        "executions": 500,
        "lateness_s": {"p50": 0.1, "p99": 0.4, "max": 0.5},
        "storage_requests_by_kind": {"POST $batch": 2.0, "GET scheduler-occurrences": 5.0},
        "invocations_per_execution": 1.0,
        "host_cpu_ms_per_execution": 20.0,
    }
    load = sparse(inputs(figures))
    assert load is not None
    t = TelemetryModel()
    host = 1.0 * t.request_bytes + (1.0 * 2 + 1) * t.host_trace_bytes
    assert by_item(load)[TELEMETRY].usd == pytest.approx(telemetry_usd(t.span_bytes + t.log_bytes + host))


def test_a_higher_trace_limit_keeps_more_up_to_every_trace():
    t = TelemetryModel()
    host = 0.05 * t.request_bytes + 20 * 1 / 100 * t.host_trace_bytes
    for limit, kept in ((20.0, 0.2), (500.0, 1.0)):
        load = steady(inputs(traces_per_second=limit))
        assert load is not None
        assert by_item(load)[TELEMETRY].usd == pytest.approx(telemetry_usd((t.span_bytes + t.log_bytes) * kept + host))


def test_host_traces_are_not_billed_when_host_json_keeps_function_logs_at_warning():
    load = steady(inputs(host_function_logs=False))
    assert load is not None
    t = TelemetryModel()
    worker = (t.span_bytes + t.log_bytes) * 5 / 100
    assert by_item(load)[TELEMETRY].usd == pytest.approx(telemetry_usd(worker + 0.05 * t.request_bytes))


@pytest.mark.parametrize(
    ("levels", "expected"),
    [
        ({"default": "Information"}, True),
        ({"default": "Information", "Function": "Warning"}, False),
        ({"default": "Warning"}, False),
        ({"Function": "Debug"}, True),
        ({}, True),
    ],
)
def test_the_host_function_log_level_is_read_from_host_json(levels, expected):
    assert _logs_information(levels) is expected


def test_the_project_host_json_keeps_function_logs_at_warning():
    # The worker exports its own logs, sampled with their traces: the host's copies would be billed again, unsampled.
    assert read_deployment().host_function_logs is False


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"worker_sampler": "parentbased_always_on"}, "OTEL_TRACES_SAMPLER=parentbased_always_on"),
        ({"traces_per_second": None}, "SCHEDULER_TELEMETRY_TRACES_PER_SECOND"),
        ({"storage_spans": None}, "SCHEDULER_TELEMETRY_STORAGE_SPANS"),
    ],
)
def test_a_telemetry_setting_the_model_cannot_follow_is_named_and_not_priced(setting, named):
    given = inputs(**setting)
    load = steady(given)
    assert load is not None
    assert by_item(load)[TELEMETRY].usd is None
    assert any(named in name for name in given.missing)
    assert named in render_cost(inputs(**setting))


def test_steady_totals_add_the_shared_lines_to_each_host_time_model():
    load = steady(inputs())
    assert load is not None
    shared = sum(x.usd or 0.0 for x in load.lines if x.alternative == "")
    cpu = next(x.usd for x in load.lines if x.alternative == "cpu")
    busy = next(x.usd for x in load.lines if x.alternative == "busy")
    assert cpu is not None and busy is not None
    assert load.total("cpu") == pytest.approx(shared + cpu)
    assert load.total("busy") == pytest.approx(shared + busy)
    assert load.total("cpu") < load.total("busy")  # type: ignore[operator]


def test_herd_host_time_counts_the_batch_hold_from_its_early_visibility():
    load = herds(inputs())[0]
    lines = by_item(load)
    work = 1000 * 0.003 / 1  # instance-seconds of CPU for the herd
    assert lines["host time|cpu"].usd == pytest.approx(max(1.0, work) / 1000 * 1e6 * 2 * 0.00002)
    span = 5 + 1.0  # 5 s early visibility + the latest attempt's lateness
    busy = (math.ceil(work / span) * span + work) / 1000
    assert lines["host time|busy"].usd == pytest.approx(busy * 1e6 * 2 * 0.00002)
    # One-shot jobs keep their rows for the whole 60 days.
    rows = RowModel()
    kept = (rows.history_bytes + rows.ledger_bytes) * 60 / 30 + rows.claim_bytes * 7 / 30
    assert lines["table capacity (rows kept)|"].usd == pytest.approx(kept * 1e6 / 1e9 * 0.05)


def test_idle_month_prices_the_hourly_meters_for_720_hours():
    month = idle_month(inputs())
    lines = by_item(month)
    assert lines["function executions|"].usd == pytest.approx((60 + 12) * 720 * 0.40 / 1e6)
    assert lines[f"storage: {QUEUE_READ}|"].usd == pytest.approx(1000 * 720 / 10_000 * 0.002)
    assert lines[f"storage: {TABLE}|"].usd == pytest.approx(100 * 720 / 10_000 * 0.0004)
    # CPU model: at least a 1 s period a minute for the timer and for the dispatch group, and per health call.
    assert lines["host time|cpu"].usd == pytest.approx(max(30, 2 * 60 + 12) * 720 * 2 * 0.00002)
    assert lines["host time|busy"].usd == pytest.approx((60 + 12) * 720 * 2 * 0.00002)
    assert lines["always-ready baseline|"].usd == pytest.approx(2 * MONTH_S * 0.000004)
    assert month.total("cpu") == pytest.approx(sum(x.usd or 0.0 for x in month.lines if x.alternative != "busy"))


def test_a_missing_figure_is_named_and_its_lines_stay_unpriced():
    figures = copy.deepcopy(FIGURES)
    del figures["steady"]["phases"]["steady-100"]["host_cpu_ms_per_execution"]
    given = inputs(figures)
    load = steady(given)
    assert load is not None
    assert "figures.json steady/steady-100 host_cpu_ms_per_execution" in given.missing
    assert by_item(load)["host time|cpu"].usd is None
    assert load.total("cpu") is None and load.total("busy") is None
    assert "- figures.json steady/steady-100 host_cpu_ms_per_execution" in render_cost(inputs(figures))


def test_an_unconfirmed_price_is_named_not_replaced():
    prices = copy.deepcopy(PRICES)
    prices["prices"]["monitor.ingestion_per_gb"] = {"usd": None, "status": "unconfirmed"}
    given = inputs(prices=prices)
    load = steady(given)
    assert load is not None
    assert "prices.json monitor.ingestion_per_gb (unconfirmed)" in given.missing
    assert by_item(load)["telemetry (Application Insights)|"].usd is None
    assert load.priced("cpu") > 0 and load.total("cpu") is None


def test_an_upper_bound_price_is_used_and_says_at_most():
    prices = copy.deepcopy(PRICES)
    prices["prices"]["functions.always_ready_baseline_per_gb_s"] = {
        "usd": None,
        "upper_bound_usd": 0.00002,
        "status": "unconfirmed",
    }
    given = inputs(prices=prices)
    load = steady(given)
    assert load is not None
    baseline = by_item(load)["fixed share: always-ready baseline|"]
    assert baseline.bound and baseline.usd == pytest.approx(2 * MONTH_S * 0.00002 / (100 * MONTH_S / 1e6))
    assert "prices.json functions.always_ready_baseline_per_gb_s" in given.bounds
    assert "at most" in render_cost(inputs(prices=prices))


def test_an_estimate_of_a_bounded_price_is_printed_beside_the_bound_never_in_its_place():
    prices = copy.deepcopy(PRICES)
    prices["prices"]["functions.always_ready_baseline_per_gb_s"] = {
        "usd": None,
        "upper_bound_usd": 0.00002,
        "estimate_usd": 0.000004,
        "estimate_basis": "a fifth of the bound",
        "status": "unconfirmed",
    }
    bounded = steady(inputs(prices=prices))
    assert bounded is not None
    bound_total = bounded.total("cpu")
    assert bound_total is not None
    # The baseline's share a million at 100/s: 2 GB x a month x the price / a month's executions.
    at_bound, at_estimate = (2 * MONTH_S * price / (100 * MONTH_S / 1e6) for price in (0.00002, 0.000004))
    estimated_total = bound_total - at_bound + at_estimate
    text = render_cost(inputs(prices=prices))
    verdict = text.split("\n")[2]
    before, _, after = verdict.partition("At the estimates of the prices known only as bounds")
    assert f"${bound_total:.2f}" in before and f"${estimated_total:.2f}" in after, verdict
    assert "(functions.always_ready_baseline_per_gb_s)" in after
    assert "Estimate of prices.json functions.always_ready_baseline_per_gb_s: $0.000004 (a fifth of the bound)" in text
    assert "| fixed share: always-ready baseline | (1 x 2 GB x 2,592,000 s x $0.00002/GB-s)" in text  # the bound
    unestimated = copy.deepcopy(prices)
    del unestimated["prices"]["functions.always_ready_baseline_per_gb_s"]["estimate_usd"]
    assert "At the estimates" not in render_cost(inputs(prices=unestimated))


def test_no_figures_at_all_name_every_load_missing():
    given = inputs(figures={})
    text = render_cost(given)
    for name in ("figures.json steady/steady-* (no phase)", "figures.json fire/herd-* (no phase)"):
        assert name in given.missing and name in text
    assert "cannot tell" in text


def test_the_goal_verdict_follows_both_totals():
    def load_of(cpu: float | None, busy: float, shared: float) -> Load:
        return Load(
            "steady",
            "a million executions",
            "test",
            [Line("x", "", shared), Line("h", "", cpu, "cpu"), Line("h", "", busy, "busy")],
        )

    assert "holds, $0.90" in goal(load_of(0.1, 0.4, 0.5))
    assert "holds only with the CPU model" in goal(load_of(0.1, 0.8, 0.5))
    assert "does not hold" in goal(load_of(0.6, 0.8, 0.5))
    assert "does not hold: the priced lines alone" in goal(load_of(None, 0.8, 1.5))
    assert "cannot tell" in goal(load_of(None, 0.1, 0.1))


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("POST $batch", TABLE),
        ("GET schedulerJobs", TABLE),
        ("DELETE schedulerDue", TABLE),
        ("POST scheduler-occurrences", QUEUE_WRITE),
        ("DELETE scheduler-dispatch", QUEUE_WRITE),
        ("GET scheduler-occurrences", QUEUE_READ),
        ("PUT azure-webjobs-hosts", BLOB_WRITE),
        ("GET azure-webjobs-hosts", BLOB_READ),
        ("table-transaction", TABLE),
        ("table-read", TABLE),
        ("queue-receive", QUEUE_READ),
        ("queue-send", QUEUE_WRITE),
        ("blob-lease", BLOB_WRITE),
    ],
)
def test_storage_kinds_are_priced_by_class(kind, expected):
    assert storage_class(kind) == expected


def test_write_replaces_only_the_generated_block():
    text = "intro\n<!-- cost:begin (generated) -->\nold\n<!-- cost:end -->\nafter\n"
    assert (
        replace_block(text, "cost", "new\n")
        == "intro\n<!-- cost:begin (generated) -->\nnew\n<!-- cost:end -->\nafter\n"
    )
    with pytest.raises(ValueError, match="markers"):
        replace_block("no markers", "cost", "x")


def test_the_deployment_is_read_from_the_bicep_and_host_json():
    deployment = read_deployment(ROOT)
    assert deployment.instance_memory_mb in (512, 2048, 4096)
    assert deployment.maximum_instances >= 1 and deployment.availability_locations >= 1
    assert deployment.log_alert_minutes and all(m >= 1 for m in deployment.log_alert_minutes)
    assert deployment.host_items_per_s > 0


def _root_with(tmp_path: Path, settings: str, main_params: str = "") -> Path:
    """A copy of the repository's infra and host.json with `settings` added to the function app's settings."""
    shutil.copytree(ROOT / "infra", tmp_path / "infra")
    shutil.copy(ROOT / "host.json", tmp_path / "host.json")
    app = tmp_path / "infra" / "modules" / "functionapp.bicep"
    text = app.read_text()
    for name in ("SCHEDULER_TELEMETRY_TRACES_PER_SECOND", "SCHEDULER_TELEMETRY_STORAGE_SPANS", "OTEL_TRACES_SAMPLER"):
        assert f"name: '{name}'" not in text or not settings, "the Bicep sets it already: the cases below need it unset"
    app.write_text(text.replace("appSettings: [\n", "appSettings: [\n" + settings, 1))
    main = tmp_path / "infra" / "main.bicep"
    main.write_text(main.read_text() + main_params)
    return tmp_path


def _setting(name: str, value: str) -> str:
    return f"        {{\n          name: '{name}'\n          value: {value}\n        }}\n"


@pytest.mark.parametrize(
    ("settings", "main_params", "expected"),
    [
        ("", "", (None, TRACES_PER_SECOND, False)),
        (
            _setting("SCHEDULER_TELEMETRY_TRACES_PER_SECOND", "'2.5'")
            + _setting("SCHEDULER_TELEMETRY_STORAGE_SPANS", "'true'"),
            "",
            (None, 2.5, True),
        ),
        (
            _setting("SCHEDULER_TELEMETRY_TRACES_PER_SECOND", "string(tracesPerSecond)"),
            "\nparam tracesPerSecond int = 12\n",
            (None, 12.0, False),
        ),
        (_setting("SCHEDULER_TELEMETRY_STORAGE_SPANS", "'${spans}'"), "", (None, TRACES_PER_SECOND, None)),
        (_setting("OTEL_TRACES_SAMPLER", "'microsoft.rate_limited'"), "", ("microsoft.rate_limited", 5.0, False)),
    ],
)
def test_the_worker_telemetry_settings_are_read_from_the_function_app_bicep(tmp_path, settings, main_params, expected):
    deployment = read_deployment(_root_with(tmp_path, settings, main_params))
    assert (deployment.worker_sampler, deployment.traces_per_second, deployment.storage_spans) == expected
