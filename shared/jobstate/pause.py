"""A job's pause (`properties.pause`, model/occurrence_control.py): no occurrence due before `until` runs, and the
job resumes by itself at `until`. Pure.

How it is kept (docs/decisions.md, "Occurrence control"):
- a pause is in force for an Enabled job while `until` lies ahead; the record marks it as a Disabled job is
  marked (`paused_since`: when it took hold, kept while the same job stays paused; `paused_by`: `Paused`), by
  `marks`, which every planning of the job applies;
- while it holds, the job's due entry is `until` itself (not its next occurrence): nothing of the job is queued
  before it. At `until` the dispatcher takes the resume step (`resume_step`): the occurrences from
  `paused_since` up to `until` (inclusive) are missed as after an outage, and the job's missed-run policy picks
  which run (Latest, the default: the latest of them; Skip: none; All: the latest `maxRuns` within `window`), at
  `until` and one a second after it, never before; the others get ledger entries, reason Paused, with the note;
- a pause whose `until` has passed is inert (kept as written, so it reads back equal); a write that sets a pause
  on a job with no occurrence before `until` marks nothing (there is nothing to hold);
- a run-now, a backfill and the retries of an occurrence that started before the pause are not held: they are
  asked for one by one, or belong to what already ran;
- a collection's pause (`collection_holds`) is a gate, as the collection's state is: the executor holds each
  scheduled occurrence of its jobs due before `until` at its second (ledger Paused, with the note), and at `until`
  the jobs go on with their next occurrences; nothing of what it held is caught up (as after a collection was
  Disabled: `backfill` runs such occurrences again when they are wanted).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..model import JobPause, JobState, LedgerReason, format_utc
from ..records import JobRecord
from .missed import CatchUp, choose
from .series import keep_series, series_of

PAUSED = LedgerReason.PAUSED.value


def in_force(job: JobRecord, now: datetime) -> JobPause | None:
    """The job's pause when it holds at `now` (an Enabled job, `until` ahead)."""
    pause = job.properties.pause
    if job.state != JobState.ENABLED or pause is None or pause.until <= now:
        return None
    return pause


def marks(job: JobRecord, now: datetime) -> JobRecord:
    """The job with its pause marks as of `now`: set (or kept) while its pause holds and an occurrence of it
    comes before `until`, cleared when a pause that marked it no longer does; a Disabled job's marks untouched."""
    pause = in_force(job, now)
    if pause is not None:
        first = series_of(job).first(now)
        if first is not None and first <= pause.until:
            since = job.paused_since if job.paused_by == PAUSED and job.paused_since is not None else now
            return keep_series(job, replace(job, paused_since=since, paused_by=PAUSED))
    if job.paused_by == PAUSED:
        return keep_series(job, replace(job, paused_since=None, paused_by=None))
    return job


def holds(job: JobRecord, occurrence: datetime) -> JobPause | None:
    """The pause that holds `occurrence` back (it is due while the job is marked paused, before `until`)."""
    pause = job.properties.pause
    if job.paused_by != PAUSED or pause is None or job.paused_since is None:
        return None
    return pause if job.paused_since <= occurrence < pause.until else None


def resumes_at(job: JobRecord) -> datetime | None:
    """Where a paused job's due entry is: its pause's `until` (None when it is not marked paused)."""
    pause = job.properties.pause
    return pause.until if job.paused_by == PAUSED and pause is not None else None


def is_resume(job: JobRecord, due: datetime) -> bool:
    return resumes_at(job) == due


def resumed_catch_up(job: JobRecord, ledger_limit: int) -> CatchUp | None:
    """What the resume of a paused job runs and lets go: its occurrences from `paused_since` to `until`, under
    its missed-run policy as after an outage (an occurrence at `until` itself is the latest, so under Latest it
    runs in place of the others); an occurrence at `until` always runs: it was never held. None when no
    occurrence lies there."""
    pause = job.properties.pause
    assert pause is not None and job.paused_since is not None
    series = series_of(job)
    first = series.first(job.paused_since)
    if first is None or first > pause.until:
        return None
    caught = choose(series, job.properties.missed_run_policy, first, pause.until, ledger_limit, LedgerReason.PAUSED)
    if caught.latest != pause.until or pause.until in caught.runs:
        return caught
    let_go = tuple(x for x in caught.let_go if x != pause.until)
    return replace(caught, runs=(*caught.runs, pause.until), let_go=let_go, let_go_count=caught.let_go_count - 1)


def collection_holds(pause: JobPause | None, occurrence: datetime, scheduled_first: bool) -> JobPause | None:
    """The collection's pause when it holds back a scheduled occurrence's first attempt due before its `until`
    (a collection's pause acts at each occurrence's second, as its state does: the executor asks)."""
    if pause is None or not scheduled_first or occurrence >= pause.until:
        return None
    return pause


def collection_why(pause: JobPause) -> str:
    note = f": {pause.note}" if pause.note else ""
    return f"Not run: its job collection was paused until {format_utc(pause.until)}{note}."


def why(job: JobRecord) -> str:
    """A paused occurrence's ledger message: until when, and the pause's note."""
    pause = job.properties.pause
    assert pause is not None
    note = f": {pause.note}" if pause.note else ""
    return f"Not run: the job was paused until {format_utc(pause.until)}{note}."
