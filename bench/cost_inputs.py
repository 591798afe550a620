"""The inputs of the cost and capacity models, each fetched by the name a reader can look up.

Contract:
- `Inputs.price(key)`, `Inputs.platform(key)` read bench/prices.json; `Inputs.figure(bench, phase, key)` and
  `Inputs.kinds(...)` read docs/figures.json (the schema the issue-41 helpers share: `{bench: {"phases":
  {phase: {key: value}}}}`; a dotted key such as `lateness_s.max` reads a nested value).
- A value that is absent (or null, or an unconfirmed price without a bound) is never replaced by a default: the
  call returns None and records the input's name (`prices.json functions.executions_per_million`,
  `figures.json fire/herd-1000-0.5s host_cpu_ms_per_execution`) in `missing`. Every input used is recorded in
  `used` with its value, so an output can name what it rests on.
- A price that is only an upper bound (`upper_bound_usd`) is returned as that bound and recorded in `bounds`:
  what is computed from it is "at most". A price whose status is not `microsoft-docs` is recorded in `third_party`.
- `with_estimates()`: the same inputs, but an unconfirmed price that carries an `estimate_usd` (with the
  `estimate_basis` it rests on) is returned as that estimate and recorded in `estimated` instead of `bounds`: what
  a reader may expect to pay, printed beside the bound, never in its place.
- `Deployment` holds what infra/main.bicep, infra/modules/*.bicep and host.json set (`read_deployment`); the
  model never guesses a setting the Bicep could change. The worker's telemetry settings are read from the app
  settings of infra/modules/functionapp.bicep (a literal, or a parameter's default) and parsed by the app's own
  `TelemetrySettings`, so an absent setting has the app's default; one set by another expression is None.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.telemetry.setup import TelemetrySettings

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures.json"
PRICES = ROOT / "bench" / "prices.json"


@dataclass(frozen=True)
class Deployment:
    """The settings of a deployment that the bill depends on, with where each was read."""

    instance_memory_mb: int  # infra/main.bicep `instanceMemoryMB`
    always_ready: int  # infra/main.bicep `alwaysReadyExecutors` (instances kept for function:executor)
    maximum_instances: int  # infra/main.bicep `maximumInstanceCount`
    storage_sku: str  # infra/main.bicep `storageSkuName`
    log_retention_days: int  # infra/main.bicep `logRetentionInDays`
    availability_locations: int  # infra/modules/availability.bicep `Locations`
    availability_frequency_s: int  # infra/modules/availability.bicep `frequencySeconds`
    log_alert_minutes: tuple[int, ...]  # evaluation frequency of each log alert rule (alerts.bicep, silence.bicep)
    metric_alerts: int  # metric alert rules (one time series each)
    worker_sampler: str | None  # OTEL_TRACES_SAMPLER in the app settings: it replaces the app's sampler
    traces_per_second: float | None  # SCHEDULER_TELEMETRY_TRACES_PER_SECOND as the app reads it (None: unreadable)
    storage_spans: bool | None  # SCHEDULER_TELEMETRY_STORAGE_SPANS as the app reads it (None: unreadable)
    host_items_per_s: float  # host.json samplingSettings.maxTelemetryItemsPerSecond (the host's own items)
    # host.json logging.logLevel "Function" at Information or below: the host sends its "Executing"/"Executed" traces
    # and the worker's forwarded log lines to Application Insights (the worker exports its own, sampled, besides).
    host_function_logs: bool = True

    @property
    def instance_gb(self) -> float:
        # Microsoft's own example bills a 2,048 MB instance as 2 GB (docs/cost.md, "What is billed").
        return self.instance_memory_mb / 1024


def _bicep_param(text: str, name: str) -> str:
    match = re.search(rf"^param {name} \w+ = (.+)$", text, re.MULTILINE)
    if match is None:
        raise ValueError(f"infra Bicep: no default for param {name}")
    return match.group(1).strip().strip("'")


def _app_setting(app: str, params: tuple[str, ...], name: str) -> tuple[bool, str | None]:
    """Whether the Bicep sets app setting `name`, and its value: a literal, or the default of the parameter it
    names (`value: p` or `string(p)`, looked up in `params` in order); None for any other expression."""
    found = re.search(rf"name: '{name}'\s*\n\s*value: (.+)$", app, re.MULTILINE)
    if found is None:
        return False, None
    value = found.group(1).strip()
    literal = re.fullmatch(r"'([^']*)'", value)
    if literal and "${" not in value:
        return True, literal.group(1)
    reference = re.fullmatch(r"string\((\w+)\)|(\w+)", value)
    param = (reference.group(1) or reference.group(2)) if reference else None
    for text in params if param else ():
        if re.search(rf"^param {param} \w+ = ", text, re.MULTILINE):
            return True, _bicep_param(text, str(param))
    return True, None


def _worker_telemetry(app: str, params: tuple[str, ...]) -> tuple[str | None, float | None, bool | None]:
    """OTEL_TRACES_SAMPLER (its value, or the expression), the traces a second and the storage spans."""
    names = ("SCHEDULER_TELEMETRY_TRACES_PER_SECOND", "SCHEDULER_TELEMETRY_STORAGE_SPANS")
    found = {name: _app_setting(app, params, name) for name in names}
    settings = TelemetrySettings.from_environment({k: v for k, (_, v) in found.items() if v is not None})
    readable = {k: not present or v is not None for k, (present, v) in found.items()}
    sampler_set, sampler = _app_setting(app, params, "OTEL_TRACES_SAMPLER")
    if sampler_set and sampler is None:
        sampler = "(an expression)"
    return (
        sampler or None,  # the distro ignores an empty one
        settings.traces_per_second if readable[names[0]] else None,
        settings.storage_spans if readable[names[1]] else None,
    )


def read_deployment(root: Path = ROOT) -> Deployment:
    main = (root / "infra" / "main.bicep").read_text()
    availability = (root / "infra" / "modules" / "availability.bicep").read_text()
    app = (root / "infra" / "modules" / "functionapp.bicep").read_text()
    rules = [(root / "infra" / "modules" / name).read_text() for name in ("alerts.bicep", "silence.bicep")]
    host = json.loads((root / "host.json").read_text())
    minutes: list[int] = []
    for text in rules:
        # A `[for ...]` rule exists only for the items of a parameter that defaults to empty (noSuccessAlerts).
        for block in re.split(r"\nresource ", text)[1:]:
            if "scheduledQueryRules" in block.split("\n", 1)[0] and "[for " not in block.split("\n", 1)[0]:
                found = re.search(r"evaluationFrequency: 'PT(\d+)M'", block)
                if found:
                    minutes.append(int(found.group(1)))
    sampler, traces_per_second, storage_spans = _worker_telemetry(app, (main, app))
    sampling = host["logging"]["applicationInsights"]["samplingSettings"]
    return Deployment(
        instance_memory_mb=int(_bicep_param(main, "instanceMemoryMB")),
        always_ready=int(_bicep_param(main, "alwaysReadyExecutors")),
        maximum_instances=int(_bicep_param(main, "maximumInstanceCount")),
        storage_sku=_bicep_param(main, "storageSkuName"),
        log_retention_days=int(_bicep_param(main, "logRetentionInDays")),
        availability_locations=len(re.findall(r"^\s*Id: '", availability, re.MULTILINE)),
        availability_frequency_s=int(_bicep_param(availability, "frequencySeconds")),
        log_alert_minutes=tuple(minutes),
        metric_alerts=len(re.findall(r"Microsoft\.Insights/metricAlerts@", availability + "".join(rules))),
        worker_sampler=sampler,
        traces_per_second=traces_per_second,
        storage_spans=storage_spans,
        host_items_per_s=float(sampling["maxTelemetryItemsPerSecond"]) if sampling.get("isEnabled") else 0.0,
        host_function_logs=_logs_information(host["logging"].get("logLevel", {})),
    )


_LEVELS = ("trace", "debug", "information", "warning", "error", "critical", "none")


def _logs_information(levels: dict[str, str]) -> bool:
    """Whether the host logs the functions' categories at Information: "Function" when set, else "default" (the
    host's own default is Information)."""
    level = str(levels.get("Function", levels.get("default", "Information"))).lower()
    return level not in _LEVELS or _LEVELS.index(level) <= _LEVELS.index("information")


@dataclass
class Inputs:
    prices: dict[str, Any]
    figures: dict[str, Any]
    deployment: Deployment
    missing: list[str] = field(default_factory=list)
    used: dict[str, Any] = field(default_factory=dict)
    bounds: list[str] = field(default_factory=list)
    third_party: list[str] = field(default_factory=list)
    estimates: bool = False  # an unconfirmed price's `estimate_usd` stands in for it (`with_estimates`)
    estimated: list[str] = field(default_factory=list)

    def with_estimates(self) -> Inputs:
        return Inputs(self.prices, self.figures, self.deployment, estimates=True)

    def miss(self, name: str) -> None:
        if name not in self.missing:
            self.missing.append(name)

    def price(self, key: str) -> float | None:
        name = f"prices.json {key}"
        entry = self.prices.get("prices", {}).get(key)
        if not isinstance(entry, dict):
            self.miss(name)
            return None
        value = entry.get("usd")
        if value is None and self.estimates and entry.get("estimate_usd") is not None:
            value = entry["estimate_usd"]
            if name not in self.estimated:
                self.estimated.append(name)
        if value is None and entry.get("upper_bound_usd") is not None:
            value = entry["upper_bound_usd"]
            if name not in self.bounds:
                self.bounds.append(name)
        if value is None:
            self.miss(f"{name} ({entry.get('status', 'no status')})")
            return None
        unsourced = name in self.bounds or name in self.estimated
        if entry.get("status") != "microsoft-docs" and name not in self.third_party and not unsourced:
            self.third_party.append(name)
        self.used[name] = value
        return float(value)

    def platform(self, key: str) -> Any:
        name = f"prices.json {key}"
        entry = self.prices.get("platform", {}).get(key) or self.prices.get("prices", {}).get(key)
        value = entry.get("value") if isinstance(entry, dict) else None
        if value is None:
            self.miss(name)
            return None
        self.used[name] = value
        return value

    def phase(self, bench: str, phase: str) -> dict[str, Any] | None:
        found = self.figures.get(bench, {}).get("phases", {}).get(phase)
        return found if isinstance(found, dict) else None

    def figure(self, bench: str, phase: str, key: str, *, required: bool = True) -> float | None:
        name = f"figures.json {bench}/{phase} {key}"
        value: Any = self.phase(bench, phase)
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if not isinstance(value, int | float) or isinstance(value, bool):
            if required:
                self.miss(name)
            return None
        self.used[name] = value
        return float(value)

    def kinds(self, bench: str, phase: str, key: str) -> dict[str, float] | None:
        name = f"figures.json {bench}/{phase} {key}"
        value = (self.phase(bench, phase) or {}).get(key)
        if not isinstance(value, dict) or not all(isinstance(v, int | float) for v in value.values()):
            self.miss(name)
            return None
        self.used[name] = dict(value)
        return {str(k): float(v) for k, v in value.items()}

    def phases(self, bench: str, prefix: str) -> list[str]:
        """The phases of a bench whose names start with `prefix`, in the file's order."""
        return [name for name in self.figures.get(bench, {}).get("phases", {}) if name.startswith(prefix)]

    def provenance(self, bench: str) -> str:
        """`commit, date, machine` of a bench's run, as figures.json records it (empty when absent)."""
        run = self.figures.get(bench, {})
        machine = run.get("machine", {})
        parts = [str(run[k]) for k in ("commit", "date") if run.get(k)]
        if machine.get("cores"):
            parts.append(f"{machine['cores']} cores")
        return ", ".join(parts)


def load(figures: Path = FIGURES, prices: Path = PRICES, root: Path = ROOT) -> Inputs:
    """The inputs from the files; a figures file that does not exist yet is an empty one (all figures missing)."""
    figures_data = json.loads(figures.read_text()) if figures.exists() else {}
    return Inputs(json.loads(prices.read_text()), figures_data, read_deployment(root))
