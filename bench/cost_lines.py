"""Meters to dollars: the line items of docs/cost.md, each a formula over named inputs (bench/cost_inputs.py).

Contract:
- Each function turns measured quantities (per execution, or per hour for the idle deployment) into `Line`s:
  the item, the formula with its numbers, and dollars for the quantity asked (`per`: executions, or hours).
- A line whose input is missing has `usd` None (the input is named in `Inputs.missing`); nothing is estimated.
  A line resting on an upper-bound price is marked `bound`; one resting on a third-party price `third_party`.
- Storage requests are priced by class from their kind: the harness's `METHOD resource` (table names are
  letters and digits only, queue and container names have hyphens; the Functions host's own blobs are
  `azure-webjobs-*`) or a `service-operation` name (`table-transaction`, `queue-receive`, `blob-lease`).
- `Load` is a priced set of lines with its two totals; `cores` and `min_period` read the platform figures the
  host-time lines of every load rest on.
- The row-size model inputs below are named here and in docs/cost.md, with how each was obtained (the telemetry
  line and its model: bench/cost_telemetry.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.cost_inputs import Inputs

MILLION = 1_000_000
MONTH_HOURS = 30 * 24
MONTH_S = MONTH_HOURS * 3600
GB = 1e9  # Azure Monitor and storage capacity bill decimal GB

TABLE, QUEUE_WRITE, QUEUE_READ, BLOB_WRITE, BLOB_READ = (
    "table",
    "queue-class1",
    "queue-class2",
    "blob-write",
    "blob-read",
)
PRICE_OF = {
    TABLE: "table_transactions_per_10k",
    QUEUE_WRITE: "queue_class1_per_10k",
    QUEUE_READ: "queue_class2_per_10k",
    BLOB_WRITE: "blob_write_per_10k",
    BLOB_READ: "blob_read_per_10k",
}
_READS = {"GET", "HEAD"}
_READ_WORDS = ("read", "get", "receive", "peek", "query", "list")


@dataclass(frozen=True)
class RowModel:
    """Bytes a kept row bills, by Azure's entity-size formula (4 + 2 x key lengths + per property 8 + 2 x name
    length + value) for the store's rows (shared/store/history.py, ledger.py, claims.py) with a 69-character
    partition key and a 100-character history message."""

    history_bytes: float = 900
    ledger_bytes: float = 900
    claim_bytes: float = 350
    queue_message_bytes: float = 65536  # the Azure maximum: the queue capacity line is an upper bound


@dataclass
class Line:
    item: str
    formula: str
    usd: float | None
    alternative: str = ""  # "" counts in both totals; "cpu" / "busy": one of the two host-time models
    bound: bool = False
    third_party: bool = False


@dataclass
class Load:
    """A load's lines. Each line counts in both totals unless it is one of the two host-time models."""

    name: str
    unit: str
    source: str
    lines: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def total(self, model: str) -> float | None:
        picked = [x.usd for x in self.lines if x.alternative in ("", model)]
        return None if any(v is None for v in picked) else sum(v for v in picked if v is not None)

    def priced(self, model: str) -> float:
        return sum(x.usd or 0.0 for x in self.lines if x.alternative in ("", model))

    def bound(self) -> bool:
        return any(x.bound for x in self.lines)


def times(*factors: float | None) -> float | None:
    result = 1.0
    for factor in factors:
        if factor is None:
            return None
        result *= factor
    return result


def _flags(inputs: Inputs, keys: list[str]) -> tuple[bool, bool]:
    names = [f"prices.json {k}" for k in keys]
    return any(n in inputs.bounds for n in names), any(n in inputs.third_party for n in names)


def line(inputs: Inputs, item: str, formula: str, usd: float | None, keys: list[str], alt: str = "") -> Line:
    bound, third = _flags(inputs, keys)
    return Line(item, formula, usd, alt, bound, third)


def storage_class(kind: str) -> str:
    text = kind.strip()
    head, _, rest = text.partition(" ")
    if head.upper() == head and rest:  # `METHOD resource`, as bench/storage_meter.py counts
        resource = rest.strip().lower()
        read = head in _READS
        if resource.startswith("azure-webjobs") or resource == "deploymentpackage":
            return BLOB_READ if read else BLOB_WRITE
        if "-" in resource:
            return QUEUE_READ if read else QUEUE_WRITE
        return TABLE  # a table, `$batch`, or the service root
    service, _, operation = text.lower().partition("-")
    read = any(word in operation for word in _READ_WORDS)
    if service == "queue":
        return QUEUE_READ if read else QUEUE_WRITE
    if service == "blob":
        return BLOB_READ if read else BLOB_WRITE
    return TABLE


def redundancy(inputs: Inputs) -> str:
    return str(inputs.prices.get("storage", {}).get("redundancy", "lrs")).lower()


def storage_lines(inputs: Inputs, kinds: Mapping[str, float] | None, per: float, source: str) -> list[Line]:
    """Storage transactions by price class. `kinds`: requests by kind per unit (execution or hour); `per`: the
    units priced (a million executions, or the hours of a month)."""
    if kinds is None:
        return [Line("storage transactions", f"{source} storage_requests_by_kind: missing", None)]
    by_class: dict[str, float] = {}
    for kind, count in kinds.items():
        by_class[storage_class(kind)] = by_class.get(storage_class(kind), 0.0) + count
    lines = []
    for cls, count in sorted(by_class.items(), key=lambda item: -item[1]):
        key = f"storage.{redundancy(inputs)}.{PRICE_OF[cls]}"
        price = inputs.price(key)
        usd = times(count * per / 10_000, price)
        formula = f"{num(count)} x {per:,.0f} / 10,000 x ${_n(price)} ({key})"
        lines.append(line(inputs, f"storage: {cls}", formula, usd, [key]))
    return lines


def executions_line(inputs: Inputs, invocations: float | None, per: float) -> Line:
    price = inputs.price("functions.executions_per_million")
    usd = times(invocations, per / MILLION, price)
    formula = f"{_n(invocations)} invocations x {per:,.0f} x ${_n(price)} / million"
    return line(inputs, "function executions", formula, usd, ["functions.executions_per_million"])


def host_time_line(inputs: Inputs, item: str, instance_s: float | None, per: float, how: str, alt: str) -> Line:
    """Instance-seconds (per unit) x instance memory x the on-demand execution-time rate."""
    key = "functions.on_demand_execution_per_gb_s"
    price = inputs.price(key)
    gb = inputs.deployment.instance_gb
    usd = times(instance_s, per, gb, price)
    formula = f"{_n(instance_s)} instance-s ({how}) x {per:,.0f} x {gb:g} GB x ${_n(price)}/GB-s"
    return line(inputs, item, formula, usd, [key], alt)


def cores(inputs: Inputs) -> float | None:
    """The cores of an instance of the deployment's memory size (prices.json), or None with the input named."""
    table = inputs.platform("functions.cores_by_instance_memory_mb")
    found = None if table is None else table.get(str(inputs.deployment.instance_memory_mb))
    if table is not None and found is None:
        inputs.miss(f"prices.json functions.cores_by_instance_memory_mb[{inputs.deployment.instance_memory_mb}]")
    return None if found is None else float(found)


def min_period(inputs: Inputs) -> float | None:
    """The shortest billed activity period of an instance, in seconds."""
    value = inputs.platform("functions.min_billable_period_s")
    return None if value is None else float(value)


def rows_line(inputs: Inputs, residence_days: float, claim_days: float, rows: RowModel, per: float) -> Line:
    """Table capacity of the rows an execution leaves: its history and ledger rows for `residence_days`, its
    claim for `claim_days` (the retention defaults)."""
    key = f"storage.{redundancy(inputs)}.table_capacity_per_gb_month"
    price = inputs.price(key)
    byte_months = (rows.history_bytes + rows.ledger_bytes) * residence_days / 30 + rows.claim_bytes * claim_days / 30
    usd = times(byte_months * per / GB, price)
    formula = (
        f"({rows.history_bytes:g} + {rows.ledger_bytes:g} B) x {residence_days:.3g} d + {rows.claim_bytes:g} B x "
        f"{claim_days:g} d, in GB-months, x {per:,.0f} x ${_n(price)}"
    )
    return line(inputs, "table capacity (rows kept)", formula, usd, [key])


def queue_capacity_line(inputs: Inputs, sends: float, resident_s: float, rows: RowModel, per: float) -> Line:
    key = f"storage.{redundancy(inputs)}.queue_capacity_per_gb_month"
    price = inputs.price(key)
    gb_months = sends * rows.queue_message_bytes / GB * resident_s / MONTH_S
    usd = times(gb_months * per, price)
    formula = f"<= {sends:.3g} messages x 64 KiB x {resident_s:g} s resident, in GB-months, x {per:,.0f} x ${_n(price)}"
    result = line(inputs, "queue capacity (messages in flight)", formula, usd, [key])
    result.bound = True
    return result


def _n(value: float | None) -> str:
    return "?" if value is None else num(value)


def num(value: float) -> str:
    """A number as a formula shows it: grouped when large, never in exponent notation."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 0.001 or value == 0:
        return f"{value:.4g}"
    return f"{value:.10f}".rstrip("0")
