"""Forecast: how many occurrences fire in each minute of the next hours, and at which destinations. Pure.

What it counts is what the dispatcher fires (preview.py `upcoming`, which tests/jobstate/test_preview.py holds to
the dispatcher's own rule): each Enabled job's series with its exceptions (skip, move, add), its pause (nothing
before its `until`; there its resume runs what the missed-run policy picks), an occurrence already queued, a job
found behind its schedule, and each occurrence at its fire instant (its spreadWindow offset after the nominal
time), all firing at or after `now` and before `now + hours`. A job that is not Enabled fires nothing; a collection
that is not Enabled fires nothing (a note says so), and a collection's pause holds its scheduled occurrences due
before its `until` (pause.py `collection_holds`: they do not reach their destination, and are not caught up).

Not counted, as they are not known ahead: run-now and backfill runs, retries, error actions (they follow a failure),
occurrences an overlapPolicy Skip drops while an earlier one runs, and the waits of maxConcurrentExecutions and
targetRateLimits (an occurrence counts at the instant it fires, before any limit holds it back).

A destination is where the job's action goes: an Http(s) action's host (compared as pacing.py compares hosts:
lower case, an IP address canonical), a Service Bus action's namespace, a Storage queue action's storage account
(both lower case). A job whose action names none (a malformed uri) counts in the minutes only.

Limits: an Http destination that a rule of its collection's `targetRateLimits` paces (pacing.py `rule_for`: the
exact host, else the longest `*.` domain) has that rule's `requestsPerSecond` as its limit; a second is over the
limit when the occurrences of the collection firing in it under that rule (every host a `*.` rule covers shares its
budget) exceed `max(1, requestsPerSecond)`: a rule slower than one a second still lets one request go in a second,
and this looks at each second alone. Rules are per collection: across collections (a subscription's forecast) each
over-limit second names its collection, and `limit` is the lowest of the collections' limits for the destination.

Work is bounded: at most `cap` (CAP, 10,000) occurrences of one job are counted, its first ones, and a note names
each job that had more in the window (the first NAMED_CUTS by name, the others counted); at most `total` (TOTAL,
1,000,000: some seconds of work) in all, and the jobs after them are not walked (a note counts them). Jobs are
walked in the order given (a collection's in row-key order).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import (
    JobActionType,
    JobCollectionState,
    JobErrorAction,
    JobState,
    TargetRateLimit,
    format_duration,
    format_utc,
)
from ..model.concurrency import host_key
from ..records import CollectionRecord, JobRecord
from .auto_spread import Event, budget_of, event, place, tolerance_of
from .pacing import pacer_key, rule_for, target_host
from .pause import collection_holds
from .preview import Note, Upcoming, upcoming

MAX_HOURS = 168
CAP = 10_000  # occurrences counted per job: an every-minute job's week is 10,080
TOTAL = 1_000_000  # occurrences counted per answer (some seconds of work): the jobs after them are not walked
NAMED_CUTS = 20  # jobs a note names each when they were cut; the others are counted in one note
MAX_OVER_LIMIT = 100  # over-limit seconds listed per destination
_FIRST_ASK = 64  # occurrences asked of `upcoming` first (`due_in` asks for more while the window is not covered)


@dataclass(frozen=True)
class Destination:
    name: str
    kind: str  # Http, ServiceBus, StorageQueue


@dataclass(frozen=True)
class Count:
    at: datetime  # a minute, or a second
    count: int


@dataclass(frozen=True)
class OverLimit:
    second: datetime
    count: int  # of the occurrences under the rule in that second
    collection: str  # the resource id of the collection whose rule it exceeds


@dataclass(frozen=True)
class DestinationForecast:
    destination: Destination
    total: int
    busiest: Count  # the second with the most occurrences (the earliest of equals)
    limit: float | None
    limit_host: str | None  # the rule's host (`*.` and a domain for a rule over many hosts)
    over_limit: tuple[OverLimit, ...]  # the most crowded first, at most MAX_OVER_LIMIT
    over_limit_seconds: int  # how many seconds are over the limit in all
    minutes: tuple[Count, ...]


@dataclass(frozen=True)
class Forecast:
    since: datetime
    until: datetime
    minutes: tuple[Count, ...]  # only minutes with occurrences, in order
    destinations: tuple[DestinationForecast, ...]  # the busiest first
    notes: tuple[Note, ...]


def destination_of(action: JobErrorAction) -> Destination | None:
    """Where the action goes, as its forecast counts it (None: it names no host)."""
    if action.type in (JobActionType.HTTP, JobActionType.HTTPS) and action.request is not None:
        host = target_host(action.request.uri)
        return Destination(host_key(host.rstrip(".")), "Http") if host else None
    if action.type == JobActionType.STORAGE_QUEUE and action.queue_message is not None:
        return Destination(action.queue_message.storage_account.lower(), "StorageQueue")
    message = action.service_bus_queue_message or action.service_bus_topic_message
    if message is not None and message.namespace:
        return Destination(message.namespace.lower(), "ServiceBus")
    return None


def due_in(job: JobRecord, now: datetime, until: datetime, cap: int = CAP) -> tuple[list[Upcoming], bool]:
    """The job's occurrences that fire from `now` until before `until` (the first `cap`), and whether more fire in
    the window. Asks `upcoming` again while the window is not covered: for as many more as the rate of what it
    found says the window holds, and a fifth more (at least twice as many), so a regular job is asked twice."""
    if job.state != JobState.ENABLED:
        return [], False
    asked = min(_FIRST_ASK, cap + 1)
    while True:
        found, _ = upcoming(job, now, asked)
        within = [u for u in found if u.fires < until]
        if len(within) > cap:
            return within[:cap], True
        if len(found) < asked or found[-1].fires >= until:
            return within, False
        covered = (found[-1].fires - now) / (until - now)
        guess = int(asked / covered * 1.2) + 1 if covered > 0 else asked * 4
        asked = min(max(asked * 2, guess), cap + 1)


def _minutes(seconds: Counter[datetime]) -> tuple[Count, ...]:
    minutes: Counter[datetime] = Counter()
    for second, count in seconds.items():
        minutes[second.replace(second=0)] += count
    return tuple(Count(minute, minutes[minute]) for minute in sorted(minutes))


class _Tally:
    """The seconds occurrences fire in: in all, per destination, per (collection, rule)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.all: Counter[datetime] = Counter()
        self.at: defaultdict[Destination, Counter[datetime]] = defaultdict(Counter)
        self.ruled: defaultdict[tuple[str, str], Counter[datetime]] = defaultdict(Counter)
        self.rules: defaultdict[Destination, dict[str, TargetRateLimit]] = defaultdict(dict)  # collection -> rule
        self.notes: list[Note] = []
        self.left = total  # occurrences the answer may still count
        self.cut: list[tuple[str, int]] = []  # (job, occurrences counted) of the jobs with more in the window
        self.unwalked = 0  # jobs not walked: the answer had counted `total` occurrences before them

    def add(self, collection: str, rules: Sequence[TargetRateLimit], job: JobRecord, fires: Iterable[datetime]) -> None:
        action = job.properties.action
        target = destination_of(action) if action is not None else None
        rule = rule_for(target.name, rules) if target is not None and target.kind == "Http" else None
        if target is not None and rule is not None:
            self.rules[target][collection] = rule
        seconds = [fire.replace(microsecond=0) for fire in fires]
        self.all.update(seconds)
        if target is not None and seconds:
            self.at[target].update(seconds)
        if rule is not None:
            self.ruled[collection, pacer_key(rule)].update(seconds)

    def destination(self, target: Destination) -> DestinationForecast:
        seconds = self.at[target]
        busiest = min(seconds.items(), key=lambda item: (-item[1], item[0]))
        rules = self.rules.get(target, {})
        over: list[OverLimit] = []
        for collection, rule in rules.items():
            crowded = self.ruled[collection, pacer_key(rule)]
            budget = max(1.0, float(rule.requests_per_second))
            over += [OverLimit(s, crowded[s], collection) for s in seconds if crowded[s] > budget]
        over.sort(key=lambda o: (-o.count, o.second, o.collection))
        lowest = min(rules.values(), key=lambda r: r.requests_per_second) if rules else None
        return DestinationForecast(
            target,
            sum(seconds.values()),
            Count(*busiest),
            float(lowest.requests_per_second) if lowest is not None else None,
            lowest.host if lowest is not None else None,
            tuple(over[:MAX_OVER_LIMIT]),
            len(over),
            _minutes(seconds),
        )


def _collection(
    tally: _Tally, record: CollectionRecord, jobs: Sequence[JobRecord], now: datetime, until: datetime, cap: int
) -> None:
    name = record.key.resource_id
    if record.state != JobCollectionState.ENABLED:
        state = record.state.value
        tally.notes.append(Note(f"Collection{state}", f"The job collection {name} is {state}: its jobs fire nothing."))
        return
    properties = record.definition.properties
    rules = (properties.target_rate_limits if properties is not None else None) or []
    pause = properties.pause if properties is not None else None
    if pause is not None and pause.until > now:
        tally.notes.append(
            Note(
                "CollectionPaused",
                f"The job collection {name} is paused until {format_utc(pause.until)}: its "
                "occurrences due before then do not run.",
            )
        )
    idle: Counter[str] = Counter()
    walked: list[tuple[JobRecord, list[Upcoming]]] = []
    for job in jobs:
        if job.state != JobState.ENABLED:
            idle[job.state.value] += 1
            continue
        if tally.left <= 0:
            tally.unwalked += 1
            continue
        due, cut = due_in(job, now, until, min(cap, tally.left))
        tally.left -= len(due)
        walked.append((job, [u for u in due if collection_holds(pause, u.occurrence, True) is None]))
        if cut:
            tally.cut.append((job.key.resource_id, len(due)))
    tolerance = tolerance_of(record)
    if tolerance is not None:
        tally.notes.append(
            Note(
                "AutoSpread",
                f"The job collection {name} spreads a second over a destination's budget over up to "
                f"{format_duration(tolerance)} after it: its occurrences are counted where they fire.",
            )
        )
    for job, fires in _spread(tolerance, rules, walked):
        tally.add(name, rules, job, fires)
    if idle:
        said = ", ".join(f"{n} {state}" for state, n in sorted(idle.items()))
        tally.notes.append(Note("JobsNotEnabled", f"In the job collection {name}, jobs that fire nothing: {said}."))


def _spread(
    tolerance: timedelta | None, rules: Sequence[TargetRateLimit], walked: list[tuple[JobRecord, list[Upcoming]]]
) -> list[tuple[JobRecord, list[datetime]]]:
    """Each job's fire instants, moved as the collection's autoSpread moves them at dispatch (auto_spread.py,
    with the static rules: a budget learned from push-back lasts minutes, and is not forecast)."""
    fired = [(job, [u.fires for u in due]) for job, due in walked]
    if tolerance is None:
        return fired
    events: list[tuple[int, int, Event]] = []
    for j, (job, due) in enumerate(walked):
        budget = budget_of(job, rules, {})
        if budget is None:
            continue
        for i, u in enumerate(due):
            after = due[i + 1].fires if i + 1 < len(due) else None
            events.append((j, i, event(budget, job.key, u.occurrence, u.fires, after, tolerance)))
    for (j, i, _), second in zip(events, place([e for _, _, e in events]), strict=True):
        fired[j][1][i] = second
    return fired


def forecast(
    collections: Sequence[tuple[CollectionRecord, Sequence[JobRecord]]],
    now: datetime,
    hours: int,
    cap: int = CAP,
    total: int = TOTAL,
) -> Forecast:
    """The occurrences the collections' jobs fire from `now` until `hours` later (1 to MAX_HOURS), at most `cap` of
    one job and `total` in all."""
    if not 1 <= hours <= MAX_HOURS:
        raise ValueError(f"hours must be from 1 to {MAX_HOURS}")
    until = now + timedelta(hours=hours)
    tally = _Tally(total)
    for record, jobs in collections:
        _collection(tally, record, jobs, now, until, cap)
    destinations = sorted(
        (tally.destination(target) for target in tally.at),
        key=lambda d: (-d.total, d.destination.kind, d.destination.name),
    )
    return Forecast(now, until, _minutes(tally.all), tuple(destinations), (*tally.notes, *_cuts(tally)))


def _cuts(tally: _Tally) -> list[Note]:
    """The notes on what the bounds left out: each job cut (the first NAMED_CUTS by name), the jobs not walked."""
    notes = [
        Note("JobCut", f"The job {job} fires more times in the window than are counted: its first {n} are counted.")
        for job, n in tally.cut[:NAMED_CUTS]
    ]
    if len(tally.cut) > NAMED_CUTS:
        notes.append(Note("JobCut", f"{len(tally.cut) - NAMED_CUTS} more jobs were cut so."))
    if tally.unwalked:
        notes.append(
            Note(
                "Truncated",
                f"The answer counts at most {tally.total} occurrences: {tally.unwalked} job(s) after them are not "
                "counted.",
            )
        )
    return notes
