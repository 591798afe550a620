"""Missed runs: what a dispatch that finds a job behind its schedule runs, and which occurrences it lets go.

Pure. An occurrence found more than MISSED_AFTER late was missed while nothing could run it (an outage, a
collection re-enabled, a backlog): every occurrence of the series from the due one up to now is missed,
and the job's `missedRunPolicy` (docs/decisions.md, "Missed runs, backfill, the ledger") picks what runs:
- Latest (the default, the old service's rule): the latest; the others are Postponed into it;
- Skip: none of them (SkippedByPolicy);
- All: the latest `maxRuns` of those at most `window` old, oldest first; the others SkippedByPolicy.
The job then moves on to its first occurrence after now, whatever the policy: no number of missed
occurrences disables or stalls a job. The work is bounded by `maxRuns` and by `ledger_limit` (the
occurrences named one by one, newest first), never by how many were missed; the rest are only counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..model import LedgerReason, MissedRunPolicy, MissedRunType
from .series import JobSeries

# An occurrence later than this is "missed" (the service was down), not merely late.
MISSED_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class CatchUp:
    """The missed occurrences of one dispatch: those that run, and those let go (with why)."""

    first: datetime  # the first missed occurrence (the due one)
    latest: datetime  # the latest missed occurrence (at or before now)
    runs: tuple[datetime, ...]  # oldest first
    let_go: tuple[datetime, ...]  # newest first, at most the ledger limit
    let_go_count: int  # all of them, named or not
    reason: LedgerReason
    policy: MissedRunType


def is_missed(due: datetime, now: datetime) -> bool:
    return now - due > MISSED_AFTER


def catch_up(
    series: JobSeries, policy: MissedRunPolicy | None, due: datetime, now: datetime, ledger_limit: int
) -> CatchUp | None:
    """The catch-up of a job due at `due` and found at `now`; None when `due` is not missed."""
    if not is_missed(due, now):
        return None
    return choose(series, policy, due, now, ledger_limit)


def choose(
    series: JobSeries,
    policy: MissedRunPolicy | None,
    due: datetime,
    now: datetime,
    ledger_limit: int,
    reason: LedgerReason | None = None,
) -> CatchUp:
    """What `policy` runs of the occurrences from `due` up to `now` (all taken as missed), and lets go: with
    `reason` (a pause's resume), the ones let go carry it instead of the policy's own."""
    kind = policy.kind if policy is not None else MissedRunType.LATEST
    latest = series.latest_missed(now) or due
    runs: tuple[datetime, ...]
    if kind == MissedRunType.SKIP:
        runs = ()
    elif kind == MissedRunType.LATEST:
        runs = (latest,)
    else:
        assert policy is not None
        oldest_allowed = max(due, now - policy.effective_window)
        picked: list[datetime] = []
        cursor: datetime | None = latest
        while cursor is not None and cursor >= oldest_allowed and len(picked) < policy.effective_max_runs:
            picked.append(cursor)
            cursor = series.previous(cursor)
        runs = tuple(reversed(picked))
    let_go: list[datetime] = []
    cursor = latest
    running = set(runs)
    while cursor is not None and cursor >= due and len(let_go) < ledger_limit:
        if cursor not in running:
            let_go.append(cursor)
        cursor = series.previous(cursor)
    missed = max(series.repeat_count(latest) - series.repeat_count(due) + 1, len(let_go) + len(runs))
    if reason is None:
        reason = LedgerReason.POSTPONED if kind == MissedRunType.LATEST else LedgerReason.SKIPPED_BY_POLICY
    return CatchUp(due, latest, runs, tuple(let_go), missed - len(runs), reason, kind)
