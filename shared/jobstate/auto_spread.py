"""Automatic spread (a collection's `autoSpread`, issue 40): the occurrences of a second that would exceed their
destination's budget fire later, each at most the collection's `tolerance` after its fire instant. Pure.

Rules (docs/decisions.md, "Automatic spread"):
- a job's budget is its collection's `targetRateLimits` rule for its Http host (every host a `*.` rule covers
  shares it), lowered to what its destination accepts while it pushes back (pushback.py's learned rate, when the
  caller knows one); a job without either is never moved. A budget of r requests a second lets max(1, floor(r))
  occurrences fire in a second;
- occurrences are placed in the order of their fire instants, and within a second in the order of a SHA-256 of
  the job's resource id (case-folded) and the occurrence: the same on every instance, and not always the same jobs
  last. Each takes the first second from its own that its budget has room in, at most `tolerance` later and
  before the job's next occurrence fires (so a job never overtakes itself); when no second in reach has room, the
  least crowded one in reach (the earliest of equals): the herd is spread over the tolerance, and the executor's
  pacing holds the rest;
- a second that does not exceed a budget keeps all its occurrences: only the jobs of a crowded second move;
- only the fire instant moves, as a spreadWindow's offset does (spread.py): the occurrence's identity stays, and
  lateness is measured from where it was placed.

What is counted (`planned`, at dispatch): the occurrences whose fire instants fall in the window and the tolerance
before it, walked from each Enabled job's series (pause.py: a job's or the collection's pause holds what it holds),
and each job's `dispatched_occurrence` when it falls there (a one-shot already dispatched, or a job Completed since,
still fires). Every instance counts from the same rows, so a minute's plan is the same wherever it is made; what
spilled into the tolerance before a window from further back is not counted (a herd longer than the tolerance is
rare, and the executor's pacing holds the ceiling for a static rule).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..keys import JobKey, fold_case
from ..model import JobActionType, JobCollectionState, JobState, TargetRateLimit
from ..records import CollectionRecord, JobRecord
from .pacing import pacer_key, rule_for, target_host
from .pause import collection_holds, holds
from .pushback import destination_key
from .series import series_of
from .spread import fires_at, offset_of

SECOND = timedelta(seconds=1)
WALKED = 1_000  # occurrences of one job walked per plan: a window of minutes holds far fewer


@dataclass(frozen=True)
class Budget:
    key: str  # the rule's pacer key, or the destination's (pushback.py) when only a learned rate binds
    per_second: int


@dataclass(frozen=True)
class Event:
    """One occurrence to place: `latest` is the last second it may take."""

    budget: Budget
    fire: datetime  # a whole second
    order: bytes
    latest: datetime


def budget_of(job: JobRecord, rules: Sequence[TargetRateLimit], learned: Mapping[str, float]) -> Budget | None:
    """The budget the job's occurrences share (None: they are never moved)."""
    action = job.properties.action
    if action is None:
        return None
    destination = destination_key(action)
    rate = learned.get(destination) if destination is not None else None
    rule = None
    if action.type in (JobActionType.HTTP, JobActionType.HTTPS) and action.request is not None:
        host = target_host(action.request.uri)
        rule = rule_for(host, rules) if host is not None else None
    if rule is not None:
        limit = float(rule.requests_per_second)
        return Budget(f"rule:{pacer_key(rule)}", max(1, int(limit if rate is None else min(limit, rate))))
    if rate is not None and destination is not None:
        return Budget(f"destination:{destination}", max(1, int(rate)))
    return None


def order_of(job: JobKey, occurrence: datetime) -> bytes:
    return hashlib.sha256(f"{fold_case(job.resource_id)}|{occurrence.isoformat()}".encode()).digest()[:8]


def event(
    budget: Budget, job: JobKey, occurrence: datetime, fire: datetime, next_fire: datetime | None, tolerance: timedelta
) -> Event:
    fire = fire.replace(microsecond=0)
    latest = fire + tolerance
    if next_fire is not None:
        latest = min(latest, max(fire, next_fire.replace(microsecond=0) - SECOND))
    return Event(budget, fire, order_of(job, occurrence), latest)


def place(events: Sequence[Event]) -> list[datetime]:
    """The second each event fires at (in the events' order), by the rules above."""
    used: dict[str, Counter[datetime]] = {}
    placed: list[datetime] = [e.fire for e in events]
    for i in sorted(range(len(events)), key=lambda i: (events[i].fire, events[i].order)):
        e = events[i]
        taken = used.setdefault(e.budget.key, Counter())
        reach = [e.fire + SECOND * k for k in range(int((e.latest - e.fire) / SECOND) + 1)]
        free = next((second for second in reach if taken[second] < e.budget.per_second), None)
        chosen = free if free is not None else min(reach, key=lambda second: (taken[second], second))
        taken[chosen] += 1
        placed[i] = chosen
    return placed


def tolerance_of(record: CollectionRecord) -> timedelta | None:
    properties = record.definition.properties
    spread = properties.auto_spread if properties is not None else None
    return spread.tolerance if spread is not None else None


@dataclass(frozen=True)
class SpreadPlan:
    """How much later than its fire instant each occurrence of a window fires (absent: not moved)."""

    moved: Mapping[tuple[str, datetime], timedelta]

    def offset(self, job: JobKey, occurrence: datetime) -> timedelta:
        return self.moved.get((fold_case(job.resource_id), occurrence), timedelta(0))


NOTHING_MOVED = SpreadPlan({})


def _walk(job: JobRecord, since: datetime, until: datetime) -> Iterator[tuple[datetime, datetime | None]]:
    """(occurrence, the one after it) for the job's occurrences from `since` until before `until` (nominal)."""
    series = series_of(job)
    if not series.recurring:
        at = job.next_execution_time or job.dispatched_occurrence or job.properties.start_time
        if at is not None and since <= at < until:
            yield at, None
        return
    occurrence = series.first_at_or_after(since)
    for _ in range(WALKED):
        if occurrence is None or occurrence >= until:
            return
        following = series.following(occurrence)
        yield occurrence, following
        occurrence = following


def _events(
    record: CollectionRecord,
    jobs: Iterable[JobRecord],
    learned: Mapping[str, float],
    since: datetime,
    until: datetime,
    tolerance: timedelta,
) -> Iterator[tuple[tuple[str, datetime], datetime, Event]]:
    properties = record.definition.properties
    rules = (properties.target_rate_limits if properties is not None else None) or []
    pause = properties.pause if properties is not None else None
    for job in jobs:
        budget = budget_of(job, rules, learned)
        if budget is None:
            continue
        offset = offset_of(job)
        seen: set[datetime] = set()
        walked = _walk(job, since - offset, until - offset) if job.state == JobState.ENABLED else iter(())
        for occurrence, following in walked:
            if holds(job, occurrence) is None and collection_holds(pause, occurrence, True) is None:
                seen.add(occurrence)
                fire = fires_at(occurrence, offset)
                after = fires_at(following, offset) if following is not None else None
                yield (
                    (fold_case(job.key.resource_id), occurrence),
                    fire,
                    event(budget, job.key, occurrence, fire, after, tolerance),
                )
        done = job.dispatched_occurrence
        if done is not None and done not in seen and since <= fires_at(done, offset) < until:
            fire = fires_at(done, offset)
            yield (fold_case(job.key.resource_id), done), fire, event(budget, job.key, done, fire, None, tolerance)


def planned(
    record: CollectionRecord,
    jobs: Iterable[JobRecord],
    learned: Mapping[str, float],
    start: datetime,
    end: datetime,
) -> SpreadPlan:
    """The plan of the occurrences firing from `start` until before `end` (a dispatch's minute): nothing moved
    when the collection has no autoSpread or is not Enabled."""
    tolerance = tolerance_of(record)
    if tolerance is None or record.state != JobCollectionState.ENABLED:
        return NOTHING_MOVED
    found = list(_events(record, jobs, learned, start - tolerance, end, tolerance))
    seconds = place([e for _, _, e in found])
    moved = {
        key: second - e.fire
        for (key, fire, e), second in zip(found, seconds, strict=True)
        if start <= fire < end and second != e.fire
    }
    return SpreadPlan(moved)
