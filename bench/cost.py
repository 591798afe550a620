"""All-in cost per million executions, and the capacity headlines, from the measured figures and the cited prices.

    python bench/cost.py [--figures docs/figures.json] [--prices bench/prices.json] [--write]

Reads docs/figures.json (written by bench/report.py) and bench/prices.json, prints the cost of a million executions
at three loads (sparse: 100 jobs an hour; steady; herds), the month of an idle deployment, and whether the goal of
at most $1.00 a million at steady load holds; then the capacity headlines. With `--write` it replaces the
generated blocks of docs/cost.md and docs/capacity.md (between their `<!-- ...:begin` and `<!-- ...:end -->`
markers) with the same text. Every figure printed names its inputs; an input that is absent is listed by name
under "Missing inputs" and its line shows `?`, never a guess. docs/cost.md explains each formula.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.capacity_model import DRAIN_SECONDS, ENTRY_OPERATIONS, headlines, rate_for_shards, shards_for  # noqa: E402
from bench.cost_idle import idle_month  # noqa: E402
from bench.cost_inputs import FIGURES, PRICES, Deployment, Inputs, load  # noqa: E402
from bench.cost_lines import Load  # noqa: E402
from bench.cost_loads import herds, sparse, steady  # noqa: E402
from shared.settings.app import DEFAULT_DUE_SHARDS  # noqa: E402

GOAL_USD = 1.00
COST_DOC = ROOT / "docs" / "cost.md"
CAPACITY_DOC = ROOT / "docs" / "capacity.md"


def _usd(value: float | None) -> str:
    if value is None:
        return "?"
    if value >= 0.1 or value == 0:
        return f"${value:,.2f}"
    return f"${value:.4f}".rstrip("0") if value >= 0.0001 else "< $0.0001"


def _rate(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f}"


def _table(load: Load) -> list[str]:
    rows = [
        f"#### {load.name}: {load.unit}",
        "",
        f"From {load.source}.",
        "",
        "| line item | formula | $ |",
        "| --- | --- | --- |",
    ]
    for x in load.lines:
        tag = {"cpu": " (CPU model)", "busy": " (busy bound)"}.get(x.alternative, "")
        mark = ("≤ " if x.bound else "") + _usd(x.usd) + (" †" if x.third_party else "")
        rows.append(f"| {x.item}{tag} | {x.formula} | {mark} |")
    low, high = load.total("cpu"), load.total("busy")
    at_most = "at most " if load.bound() else ""
    if low is None or high is None:
        rows += [
            "",
            f"Total: incomplete (inputs missing); the priced lines come to {at_most}"
            f"{_usd(load.priced('cpu'))} (CPU model) and {_usd(load.priced('busy'))} (busy bound).",
        ]
    else:
        rows += ["", f"Total: {at_most}{_usd(low)} with the CPU model, {at_most}{_usd(high)} at the busy bound."]
    rows += [f"({note})" for note in load.notes]
    return [*rows, ""]


def goal(load: Load | None, estimated: tuple[Load, list[str]] | None = None) -> str:
    """Whether the steady load costs at most GOAL_USD a million, said as the totals allow; with `estimated` (the
    load priced at the estimates of the prices that are only bounded, and their names), what it comes to then."""
    if load is None:
        return f"Goal (at most ${GOAL_USD:.2f} a million at steady load): cannot tell, no steady figures."
    head = f"Goal (at most ${GOAL_USD:.2f} a million at steady load): "
    verdict = head + _verdict(load, " (some prices are upper bounds: the true cost is lower)")
    if estimated is None or not estimated[1]:
        return verdict
    at, names = estimated
    # The upper-bound caveat is said once, after the first verdict: the queue capacity line stays a bound in both.
    keys = ", ".join(name.removeprefix("prices.json ") for name in names)
    return verdict + f" At the estimates of the prices known only as bounds ({keys}): {_verdict(at, '')}"


def _verdict(load: Load, caveat: str) -> str:
    low, high = load.total("cpu"), load.total("busy")
    if low is None or high is None:
        if load.priced("cpu") > GOAL_USD:
            return f"does not hold: the priced lines alone come to {_usd(load.priced('cpu'))}."
        return "cannot tell: inputs are missing (below)."
    caveat = caveat if load.bound() else ""
    if high <= GOAL_USD:
        return f"holds, {_usd(high)} at the busy bound{caveat}."
    if low <= GOAL_USD:
        return f"holds only with the CPU model ({_usd(low)}; {_usd(high)} at the busy bound){caveat}."
    return f"does not hold: {_usd(low)} with the CPU model, {_usd(high)} at the busy bound{caveat}."


def _at_estimates(inputs: Inputs) -> tuple[Load, list[str]] | None:
    """The steady load priced at the estimates bench/prices.json gives for prices known only as bounds."""
    estimated = inputs.with_estimates()
    found = steady(estimated)
    return None if found is None else (found, estimated.estimated)


def _provenance(inputs: Inputs) -> str:
    runs = [f"{bench}: {inputs.provenance(bench)}" for bench in ("steady", "fire", "idle") if inputs.provenance(bench)]
    d, prices = inputs.deployment, inputs.prices
    storage = str(prices.get("storage", {}).get("redundancy", "?")).upper()
    return (
        f"Figures: docs/figures.json ({'; '.join(runs) or 'no runs yet'}). Prices: bench/prices.json, read on "
        f"{prices.get('read_on', '?')}, {prices.get('currency', '?')}; storage priced at {storage} (the Bicep's "
        f"storageSkuName: {d.storage_sku}). Deployment: {d.instance_memory_mb} MB instances, {d.always_ready} "
        f"always ready, at most {d.maximum_instances}; worker telemetry: {_worker_telemetry(d)}."
    )


def _worker_telemetry(d: Deployment) -> str:
    if d.worker_sampler is not None:
        return f"OTEL_TRACES_SAMPLER={d.worker_sampler} (not modelled)"
    rate = "?" if d.traces_per_second is None else f"{d.traces_per_second:g}"
    spans = {None: "?", True: "on", False: "off"}[d.storage_spans]
    return f"at most {rate} traces a second per instance, storage spans {spans}"


def render_cost(inputs: Inputs) -> str:
    loads: list[Load] = []
    found_steady = steady(inputs)
    sparse_load = sparse(inputs)
    loads += [x for x in (sparse_load, found_steady) if x is not None] + herds(inputs)
    month = idle_month(inputs)
    out = [_provenance(inputs), "", goal(found_steady, _at_estimates(inputs)), ""]
    for item in loads:
        out += _table(item)
    out += _table(month)
    out += _footer(inputs)
    return "\n".join(out).rstrip() + "\n"


def _footer(inputs: Inputs) -> list[str]:
    out = ["† a third-party price (bench/prices.json says whose). ≤ rests on an upper-bound price.", ""]
    if inputs.bounds:
        out += ["Upper-bound prices: " + ", ".join(inputs.bounds) + ".", ""]
    entries = inputs.prices.get("prices", {})
    for name in inputs.bounds:
        entry = entries.get(name.removeprefix("prices.json "), {})
        if entry.get("estimate_usd") is not None:
            price = f"${entry['estimate_usd']:.10f}".rstrip("0")
            out += [f"Estimate of {name}: {price} ({entry.get('estimate_basis', 'no basis given')}).", ""]
    if inputs.missing:
        out += ["Missing inputs:", *[f"- {name}" for name in inputs.missing], ""]
    return out


def render_capacity(inputs: Inputs) -> str:
    d = inputs.deployment
    out = [
        _provenance(inputs),
        "",
        "| load | storage requests / execution | executions/s one account carries | "
        "occurrence-queue sends / execution | executions/s the queue carries | host CPU ms / execution | "
        f"executions/s one instance carries | executions/s at maximumInstanceCount {d.maximum_instances} | "
        "instances one account's rate keeps busy |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for h in headlines(inputs):
        out.append(
            f"| {h.load} | {_n(h.requests)} | {_rate(h.per_account)} | {_n(h.queue_sends)} | "
            f"{_rate(h.per_queue)} | {_n(h.cpu_ms)} | {_rate(h.per_instance)} | {_rate(h.at_maximum)} | "
            f"{_n(h.instances_for_account)} |"
        )
    carried = rate_for_shards(inputs)
    out += [
        "",
        f"Due-index shards (model: {ENTRY_OPERATIONS} entity operations per entry, a partition drained in "
        f"{DRAIN_SECONDS:g} s under its target): the default {DEFAULT_DUE_SHARDS} carry {_rate(carried)} "
        f"executions/s; 5,000/s needs {shards_for(inputs, 5000) or '?'}, 10,000/s "
        f"{shards_for(inputs, 10000) or '?'}.",
        "",
    ]
    if inputs.missing:
        out += ["Missing inputs:", *[f"- {name}" for name in inputs.missing], ""]
    return "\n".join(out).rstrip() + "\n"


def _n(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def replace_block(text: str, name: str, body: str) -> str:
    """`text` with what lies between `<!-- {name}:begin ... -->` and `<!-- {name}:end -->` replaced by `body`."""
    pattern = re.compile(rf"(<!-- {name}:begin[^>]*-->\n).*?(<!-- {name}:end -->)", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"no <!-- {name}:begin --> ... <!-- {name}:end --> markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text, count=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--figures", type=Path, default=FIGURES)
    parser.add_argument("--prices", type=Path, default=PRICES)
    parser.add_argument("--write", action="store_true", help="rewrite the generated blocks of the docs")
    args = parser.parse_args(argv)
    cost = render_cost(load(args.figures, args.prices))
    capacity = render_capacity(load(args.figures, args.prices))
    print(cost)
    print(capacity)
    if args.write:
        for doc, name, body in ((COST_DOC, "cost", cost), (CAPACITY_DOC, "capacity", capacity)):
            doc.write_text(replace_block(doc.read_text(), name, body))
            print(f"[cost] wrote the {name} block of {doc.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
