"""bench/overload.py's figures: printed, and returned as the phases bench/figures.py records
(bench/phase_figures.py's shapes).

`overload` covers the occurrences due before the drop, `after` those due from it to the end. Each: occurrences
`expected` (every job's occurrences due in the phase, ending jobs' up to the drop), `arrived` (distinct, at the
target), `let_go_missed` (not run because they reached the executor over 2 minutes late, so their job's
missed-run policy, Latest by default, postponed them into a later occurrence: matched by execution id in the
host's log), `lost` (the rest), `duplicated`, `early`, `lateness_s`; `api_put_s` (the probe's PUTs sent in the
phase's minutes) and `api_put_failed`; the costs of the phase's count window divided by the executions that
arrived in it (`executions`, whatever their due), and the health samples (`health_worst`: the one furthest behind;
`health_end`). The `after` phase adds when lateness came back: `recovered_after_s`, the start (from the drop) of
the first 20 s window of due instants from which every window's p99 is under 1 s, and
`last_late_arrival_after_drop_s`, when the last occurrence due after the drop that came 1 s late or more arrived.
`lateness_windows` lists every 20 s window from the first minute: `from_s`, `expected`, `arrived`, `lateness_s`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.harness import Harness, lateness_figures, lateness_line, percentile
from bench.overload_probes import Health, Probes, Put
from bench.phase_figures import cost, cpu_text, num
from bench.targets import Arrival
from shared.keys import JobKey
from shared.occurrence import Trigger, execution_id

SUB, RG = "bench", "rg"  # bench/harness.py's GROUP
COLLECTION_SIZE = 1000  # bench/overload.py's
WINDOW = timedelta(seconds=20)
BACK_UNDER = 1.0  # seconds: lateness has come back once it stays under this
_LET_GO = re.compile(r"occurrence ([0-9a-f-]{36})\|\S* came \S+ late \(missed\): not run")


@dataclass(frozen=True)
class Load:
    first: datetime  # the first occurrences' minute
    drop: datetime  # the ending jobs' last occurrences are before it
    end: datetime  # the measured occurrences are due before it
    staying: dict[str, bool]  # job name -> whether it runs past the drop

    def expected(self) -> set[tuple[str, datetime]]:
        """Every (job, due) the jobs should fire in [first, end)."""
        found: set[tuple[str, datetime]] = set()
        for name, stays in self.staying.items():
            second = self.first + timedelta(seconds=int(name[1:]) % 60)
            last = self.end if stays else self.drop
            found.update(
                (name, second + timedelta(minutes=k)) for k in range((last - self.first) // timedelta(minutes=1))
            )
        return found

    def key(self, name: str) -> JobKey:
        return JobKey(SUB, RG, f"o{int(name[1:]) // COLLECTION_SIZE}", name)


@dataclass(frozen=True)
class Meter:
    """The harness's counters at one instant."""

    at: datetime
    requests: int
    invocations: int
    kinds: Counter[str]
    cpu: float

    @classmethod
    def read(cls, harness: Harness) -> Meter:
        now = datetime.now(UTC)
        return cls(now, harness.requests(), harness.invocations(), harness.kinds(), harness.host_cpu_seconds())


def let_go_in_log(log: Path) -> set[str]:
    """The execution ids the executor let go as missed (executor/admission.py's log line)."""
    return set(_LET_GO.findall(log.read_text(errors="replace")))


def report(
    load: Load,
    arrivals: list[Arrival],
    let_go: set[str],
    probes: Probes,
    meters: tuple[Meter, Meter, Meter],
    drained: datetime,
) -> dict[str, dict[str, Any]]:
    expected = load.expected()
    ours = [a for a in arrivals if (a.job, a.expected) in expected]
    start, middle, finish = meters
    phases = {
        "overload": _phase(
            "overload", (load.first, load.drop, load.drop), expected, ours, let_go, load, probes, start, middle
        ),
        "after": _phase(
            "after",
            (load.drop, load.end, datetime.max.replace(tzinfo=UTC)),
            expected,
            ours,
            let_go,
            load,
            probes,
            middle,
            finish,
        ),
    }
    windows = _windows(load, expected, ours)
    after = phases["after"]
    after["recovered_after_s"] = _recovered(load, windows)
    late_after = [a.at for a in ours if a.expected >= load.drop and (a.at - a.expected).total_seconds() >= BACK_UNDER]
    after["last_late_arrival_after_drop_s"] = (
        num((max(late_after) - load.drop).total_seconds(), 1) if late_after else None
    )
    after["drained_after_end_s"] = num((drained - load.end).total_seconds(), 1)
    # An ending job's past its endTime, or of no job here (a staying job's occurrences after the end are not counted).
    stray = [a for a in arrivals if (a.job, a.expected) not in expected and not _later(load, a)]
    after["unexpected_arrivals"] = len(stray)
    for window in windows:
        late = window["lateness_s"]
        print(
            f"[overload] due +{window['from_s']:>4} s: {window['arrived']}/{window['expected']} arrived; "
            f"lateness p50 {late.get('p50', '-')} s, p99 {late.get('p99', '-')} s, max {late.get('max', '-')} s"
        )
    recovered, last = after["recovered_after_s"], after["last_late_arrival_after_drop_s"]
    print(
        f"[overload] lateness back under {BACK_UNDER:g} s (every later 20 s window's p99): "
        f"{'not by the end' if recovered is None else f'from {recovered} s after the drop'}; of the occurrences "
        f"due after the drop, {'none came' if last is None else 'the last that came'} {BACK_UNDER:g} s late or "
        f"more{'' if last is None else f' arrived {last} s after the drop'}; {len(stray)} unexpected arrivals"
    )
    return {**phases, "lateness_windows": {"windows": windows}}


def _later(load: Load, arrival: Arrival) -> bool:
    """An occurrence of a staying job due after the measured minutes (it runs on, uncounted)."""
    return load.staying.get(arrival.job, False) and arrival.expected >= load.end


def _phase(
    name: str,
    span: tuple[datetime, datetime, datetime],  # due from, due to, health samples to (the last phase: the drain's)
    expected: set[tuple[str, datetime]],
    ours: list[Arrival],
    let_go: set[str],
    load: Load,
    probes: Probes,
    counted: Meter,
    to: Meter,
) -> dict[str, Any]:
    since, until, health_until = span
    due = {item for item in expected if since <= item[1] < until}
    these = [a for a in ours if since <= a.expected < until]
    seen = Counter((a.job, a.expected) for a in these)
    missing = due - set(seen)
    missed = {item for item in missing if execution_id(load.key(item[0]), item[1], Trigger.SCHEDULE) in let_go}
    lateness = [(a.at - a.expected).total_seconds() for a in these]
    executions = sum(1 for a in ours if counted.at <= a.at < to.at)
    window = (to.at - counted.at).total_seconds()
    puts = [p for p in probes.puts if since <= p.at < until]
    health = [h for h in probes.health if since <= h.at < health_until]
    figures: dict[str, Any] = {
        "expected": len(due),
        "arrived": len(seen),
        "lost": len(missing) - len(missed),
        "let_go_missed": len(missed),
        "duplicated": sum(n - 1 for n in seen.values()),
        "early": sum(1 for x in lateness if x < 0),
        "lateness_s": lateness_figures(lateness),
        "executions": executions,
        "executions_per_s": num(executions / window, 2) if window > 0 else None,
        **cost(
            to.requests - counted.requests,
            to.invocations - counted.invocations,
            to.kinds - counted.kinds,
            executions,
            to.cpu - counted.cpu,
        ),
        **_puts(puts),
        **_health(health),
    }
    print(
        f"[overload] {name} (due {since:%H:%M:%S}Z to {until:%H:%M:%S}Z): {len(seen)}/{len(due)} arrived, "
        f"{figures['lost']} lost, {len(missed)} let go as missed (over 2 min late), {figures['duplicated']} "
        f"duplicated, {figures['early']} early; lateness {lateness_line(lateness)}"
    )
    put = figures["api_put_s"]
    print(
        f"[overload] {name}: API job PUT p50 {put.get('p50', '-')} s, p99 {put.get('p99', '-')} s, max "
        f"{put.get('max', '-')} s ({len(puts)} PUTs, {figures['api_put_failed']} failed); {executions} executions "
        f"arrived in the window ({figures['executions_per_s']}/s): {figures['storage_requests_per_execution']} "
        f"storage requests, {figures['invocations_per_execution']} invocations per execution, "
        f"{cpu_text(to.cpu - counted.cpu, executions)}"
    )
    worst, last = figures["health_worst"], figures["health_end"]
    print(f"[overload] {name}: health at its worst {worst}; at the end {last}")
    return figures


def _puts(puts: list[Put]) -> dict[str, Any]:
    took = [p.seconds for p in puts]
    figures = {"p50": num(percentile(took, 0.5)), "p99": num(percentile(took, 0.99)), "max": num(max(took))}
    return {"api_put_s": figures if took else {}, "api_put_failed": sum(1 for p in puts if p.status not in (200, 201))}


def _health(samples: list[Health]) -> dict[str, Any]:
    if not samples:
        return {"health_worst": None, "health_end": None, "health_samples": 0}
    since = samples[0].at
    rank = {"Healthy": 0, "Degraded": 1, "Unhealthy": 2}
    worst = max(samples, key=lambda h: (rank.get(h.said, 3), h.behind_s or 0.0))
    return {
        "health_worst": worst.figures(since),
        "health_end": samples[-1].figures(since),
        "health_samples": len(samples),
        "health_behind_samples": sum(1 for h in samples if any("executor is behind" in p for p in h.problems)),
    }


def _windows(load: Load, expected: set[tuple[str, datetime]], ours: list[Arrival]) -> list[dict[str, Any]]:
    found = []
    start = load.first
    while start < load.end:
        stop = start + WINDOW
        due = sum(1 for item in expected if start <= item[1] < stop)
        these = [a for a in ours if start <= a.expected < stop]
        found.append(
            {
                "from_s": int((start - load.first).total_seconds()),
                "expected": due,
                "arrived": len({(a.job, a.expected) for a in these}),
                "lateness_s": lateness_figures([(a.at - a.expected).total_seconds() for a in these]),
            }
        )
        start = stop
    return found


def _recovered(load: Load, windows: list[dict[str, Any]]) -> int | None:
    """Seconds from the drop to the first window from which every window's p99 is under BACK_UNDER."""
    drop_s = int((load.drop - load.first).total_seconds())
    back = None
    for window in windows:
        if window["from_s"] < drop_s:
            continue
        p99 = window["lateness_s"].get("p99")
        if p99 is None or p99 >= BACK_UNDER:
            back = None
        elif back is None:
            back = window["from_s"] - drop_s
    return back
