"""Overlap: what an occurrence does when an earlier occurrence of the same job still runs. Pure.

Rules (docs/decisions.md, "Overlap, limits, long-running completion, spread"):
- an occurrence *runs* from its first attempt until it ends: its main action succeeded, it faulted after its
  retries (and its error action, if any, ended), or, for an asynchronous target, its polling reached a final
  status or the deadline (`Outcome.ends_occurrence`);
- `on_occurrence` is the table: `Allow` (or no policy) runs always; `Skip` skips while one runs; `BufferOne`
  buffers while one runs and none waits, and skips while one already waits. An occurrence waiting counts as
  running for the ones after it (it runs next);
- the job's `overlap` marker (records.OverlapMarker, on the job's row) is kept for every occurrence of a job
  whose policy is not Allow (a run-now or backfill that overrides the policy with Allow too, so the scheduled
  ones after it see it), and for every occurrence whose request overrides the policy with Skip or BufferOne,
  whatever the job's policy (`tracked`): the override applies among the occurrences the marker holds. The
  other occurrences of an Allow job keep no marker (they cost nothing), so an override neither waits for them
  nor holds them back;
- `begun` decides for an occurrence at its first attempt and gives the marker to write (under the job's ETag):
  a redelivery of the running occurrence runs on (re-entrant); the waiting occurrence runs once nothing runs,
  and keeps its place as long as the running one's marker holds (`extended` holds both), after which its
  message comes back by itself (phase 2 queues it again for then): a lost waiter lapses instead of blocking
  the job;
- `ended` removes the occurrence and, when nothing runs any more, promotes the waiting one to running and names
  it (`Ended.released`): its writer queues it at once. A marker whose runner vanished lapses at `until`
  (the settings' `running_lease` past the due of its latest attempt or poll, shared/timings.py: `extended`), so
  no crash stalls a job;
- a rewrite of the job keeps what runs and drops what waits (plan.py `written`: it was queued for the old
  definition and ends JobChanged).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

from ..model import OverlapPolicy
from ..records import JobRecord, OccurrenceRef, OverlapMarker, RunningOccurrence, WaitingOccurrence
from .series import keep_series

# Occurrences one marker holds as running at once (several only through Allow overrides of run-now and backfill).
MAX_RUNNING = 20


class Turn(str, Enum):
    """What an occurrence does at its first attempt, as a named value (its `.value` is what logs show)."""

    RUN = "run"  # nothing of its job runs (or its policy lets it overlap): it runs now
    SKIP = "skip"  # one runs (or waits): it is skipped, ledger reason SkippedByOverlap
    BUFFER = "buffer"  # one runs and none waits (BufferOne): it waits, ledger reason WaitingForPrevious


def on_occurrence(policy: OverlapPolicy | None, running: bool, waiting: bool) -> Turn:
    """The decision table: `running` when an occurrence of the job runs (or waits to run next), `waiting` when
    one already waits."""
    if policy in (None, OverlapPolicy.ALLOW) or not running:
        return Turn.RUN
    if policy == OverlapPolicy.SKIP or waiting:
        return Turn.SKIP
    return Turn.BUFFER


def tracked(job: JobRecord, override: OverlapPolicy | None = None) -> bool:
    """The occurrence is kept in its job's overlap marker: its job's policy is not Allow, or its request's
    override (run-now, backfill) is not."""
    untracked = (None, OverlapPolicy.ALLOW)
    return job.properties.overlap_policy not in untracked or override not in untracked


def effective_policy(job: JobRecord, override: OverlapPolicy | None) -> OverlapPolicy:
    """The policy one occurrence follows: its request's override, else its job's."""
    return override or job.properties.overlap_policy or OverlapPolicy.ALLOW


def live(marker: OverlapMarker, now: datetime) -> tuple[RunningOccurrence, ...]:
    return tuple(r for r in marker.running if r.until > now)


@dataclass(frozen=True)
class Begun:
    turn: Turn
    job: JobRecord | None  # the job with its new marker to write, or None when the marker stays as it is


def begun(job: JobRecord, me: OccurrenceRef, now: datetime, until: datetime) -> Begun:
    """The decision for occurrence `me` at its first attempt (due now), and the job to write. Its marker, running
    or waiting, holds to `until` (`marker_until(now)`): a waiting one asks again by then (phase 2 queues its
    message again for the running one's `until` or sooner)."""
    if not tracked(job, me.overlap):
        return Begun(Turn.RUN, None)
    marker = job.overlap
    running = live(marker, now)
    if any(r.ref.execution_id == me.execution_id for r in running):  # a redelivery or takeover of itself
        return Begun(Turn.RUN, None)
    waiting = marker.waiting if marker.waiting is not None and marker.waiting.until > now else None
    if waiting is not None and waiting.ref.execution_id == me.execution_id:
        if running:  # still its predecessor's turn: it keeps its place a while longer
            held = max((waiting.until, until, *(r.until for r in running)))
            return Begun(Turn.BUFFER, _with(job, OverlapMarker(running, replace(waiting, until=held)), marker))
        return Begun(Turn.RUN, _with(job, OverlapMarker((RunningOccurrence(me, now, until),)), marker))
    turn = on_occurrence(effective_policy(job, me.overlap), bool(running) or waiting is not None, waiting is not None)
    if turn == Turn.SKIP:
        return Begun(turn, _with(job, OverlapMarker(running, waiting), marker))
    if turn == Turn.BUFFER:
        # It keeps its place as long as what it waits for holds (extended with it), and comes back by then.
        held = max((until, *(r.until for r in running)))
        return Begun(turn, _with(job, OverlapMarker(running, WaitingOccurrence(me, now, held)), marker))
    running = (*running, RunningOccurrence(me, now, until))[-MAX_RUNNING:]
    return Begun(turn, _with(job, OverlapMarker(running, waiting), marker))


@dataclass(frozen=True)
class Ended:
    job: JobRecord | None  # the job with its new marker to write, or None when the marker names no such occurrence
    released: OccurrenceRef | None = None  # the waiting occurrence that runs now: queue it at once


def ended(job: JobRecord, execution_id: str, now: datetime, until: datetime) -> Ended:
    """Occurrence `execution_id` ended; the waiting one (if nothing else runs) becomes the running one, its marker
    to `until`."""
    marker = job.overlap
    if not marker:
        return Ended(None)
    running = tuple(r for r in live(marker, now) if r.ref.execution_id != execution_id)
    waiting = marker.waiting if marker.waiting is not None and marker.waiting.until > now else None
    if not running and waiting is not None:
        promoted = OverlapMarker((RunningOccurrence(waiting.ref, now, until),))
        return Ended(_with(job, promoted, marker), waiting.ref)
    return Ended(_with(job, OverlapMarker(running, waiting), marker))


def extended(job: JobRecord, execution_id: str, until: datetime) -> JobRecord | None:
    """The running occurrence's marker held to `until` (a retry or a poll is queued for later); None when the job
    marks no such occurrence or already holds it that long."""
    marker = job.overlap
    found = [r for r in marker.running if r.ref.execution_id == execution_id and r.until < until]
    if not found:
        return None
    running = tuple(replace(r, until=until) if r in found else r for r in marker.running)
    waiting = marker.waiting  # what waits for it keeps its place as long
    if waiting is not None and waiting.until < until:
        waiting = replace(waiting, until=until)
    return _with(job, OverlapMarker(running, waiting), marker)


def settled(
    job: JobRecord,
    execution_id: str,
    ends_occurrence: bool,
    next_due: datetime | None,
    now: datetime,
    lease: timedelta,
) -> Ended:
    """What an attempt's record does to the job's marker (applied in the same change as `after_attempt`, so it
    costs no write of its own): the occurrence ended (`Outcome.ends_occurrence`: the marker lets it go and
    releases the waiting one), or its next attempt or poll is due at `next_due` (the marker is held `lease`
    past it)."""
    if ends_occurrence:
        return ended(job, execution_id, now, marker_until(now, lease))
    if next_due is not None:
        return Ended(extended(job, execution_id, marker_until(next_due, lease)))
    return Ended(None)


def marker_until(due: datetime, lease: timedelta) -> datetime:
    """Where a running occurrence's marker lapses when its next attempt or poll is due at `due`: `lease` (the
    settings' `running_lease`) past it."""
    return due + lease


def _with(job: JobRecord, marker: OverlapMarker, before: OverlapMarker) -> JobRecord | None:
    if marker == before:
        return None
    return keep_series(job, replace(job, overlap=marker))
