"""A job's occurrences: the bridge between the stored record and the pure recurrence engine.

Rules (docs/decisions.md, "Recurrence"): occurrences are anchored at startTime and past ones are skipped;
a job without startTime is anchored at its creation (so a plain recurrence runs at once, a schedule at
its first slot), and keeps that anchor (`JobRecord.anchor`) through rewrites that still give none; a job
without recurrence runs once, at startTime, or immediately when that is absent
or past. Every planned instant is therefore an occurrence of the job's series.

`series_of(record)` builds a record's `JobSeries` once and keeps it with the record (records are frozen:
a changed definition is a new record, with a series of its own), so planning, dispatching and recording
one occurrence never rebuild the engine's series.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ..model import DstShift, JobRecurrence, LedgerReason, OccurrenceException
from ..records import JobRecord
from ..recurrence import (
    FoldPolicy,
    Frequency,
    GapPolicy,
    MonthlyOccurrence,
    OccurrenceSeries,
    Recurrence,
    Schedule,
    WeekDay,
)
from .exceptions import Exceptions, earliest, index, latest

_FIRST_SECOND = datetime.min.replace(tzinfo=UTC)
_DST_MARKS = {"gap": DstShift.GAP, "fold": DstShift.FOLD, "fold-second": DstShift.FOLD_SECOND}


def engine_recurrence(recurrence: JobRecurrence) -> Recurrence:
    """The wire recurrence as the engine's pure value; `{}` as schedule means no schedule."""
    schedule = recurrence.schedule
    engine_schedule = None
    if schedule is not None and not schedule.is_empty():
        engine_schedule = Schedule(
            minutes=tuple(schedule.minutes or ()),
            hours=tuple(schedule.hours or ()),
            week_days=tuple(WeekDay(d.value) for d in schedule.week_days or ()),
            month_days=tuple(schedule.month_days or ()),
            monthly_occurrences=tuple(
                MonthlyOccurrence(WeekDay(o.day.value), o.occurrence) for o in schedule.monthly_occurrences or ()
            ),
        )
    # A cron recurrence has no frequency on the wire (model/recurrence.py); the engine ignores it beside `cron`.
    frequency = Frequency(recurrence.frequency.value) if recurrence.frequency is not None else Frequency.MINUTE
    dst = recurrence.dst_policy
    return Recurrence(
        frequency=frequency,
        interval=recurrence.interval or 1,
        count=recurrence.count,
        end_time=recurrence.end_time,
        schedule=engine_schedule,
        time_zone=recurrence.time_zone,
        cron=recurrence.cron,
        gap_policy=GapPolicy(dst.gap.value) if dst is not None and dst.gap is not None else GapPolicy.SHIFT,
        fold_policy=FoldPolicy(dst.fold.value) if dst is not None and dst.fold is not None else FoldPolicy.FIRST,
    )


def start_of(job: JobRecord) -> datetime:
    """Where the job's series starts: its startTime, else its anchor (a job written without startTime)."""
    start = job.properties.start_time or job.anchor or job.created_time
    assert start is not None, "a stored job has a startTime, an anchor or a creation time"
    return start


class JobSeries:
    """The occurrences of one job definition: its recurrence's (the engine's series, built once, lazily: a one-shot
    needs none) with its exceptions laid over them (exceptions.py). Every walk of a job's occurrences goes
    through the methods here, which answer for that series; `engine` is the nominal one.

    It holds only what the series depends on (startTime or anchor, recurrence, count origin, exceptions), so a
    record changed in anything else (state, counters, plan) keeps the same series (`keep_series`)."""

    __slots__ = ("_start_time", "_anchor", "_recurrence", "_origin", "_series", "exceptions")

    def __init__(self, job: JobRecord) -> None:
        self._start_time = job.properties.start_time
        self._anchor = start_of(job)
        self._recurrence = job.properties.recurrence
        self._origin = job.count_origin
        self._series: OccurrenceSeries | None = None
        self.exceptions: Exceptions = index(job.properties.exceptions)

    @property
    def recurring(self) -> bool:
        return self._recurrence is not None

    @property
    def engine(self) -> OccurrenceSeries:
        """The engine's series: the nominal occurrences, without the exceptions."""
        if self._series is None:
            recurrence = self._recurrence
            self._series = OccurrenceSeries(
                self._anchor, engine_recurrence(recurrence) if recurrence else None, self._origin
            )
        return self._series

    # -- the nominal series -------------------------------------------------------------------------------

    def _nominal_following(self, occurrence: datetime) -> datetime | None:
        return self.engine.next_after(occurrence) if self.recurring else None

    def _nominal_previous(self, occurrence: datetime) -> datetime | None:
        if not self.recurring or occurrence <= _FIRST_SECOND:  # nothing comes before the calendar's first second
            return None
        return self.engine.last_at_or_before(occurrence - timedelta(seconds=1))

    # -- the series the job runs ----------------------------------------------------------------------------

    def first(self, now: datetime) -> datetime | None:
        """The occurrence a newly written (or re-enabled) job runs first, or None when it has none left."""
        if not self.recurring:
            start = self._start_time
            nominal: datetime | None = max(start, now) if start else now
        else:
            nominal = self.engine.first_at_or_after(now)
        exceptions = self.exceptions
        if not exceptions:
            return nominal
        nominal = exceptions.skip_forward(nominal, self._nominal_following)
        return earliest(nominal, exceptions.next_added(now, inclusive=True))

    def first_at_or_after(self, instant: datetime) -> datetime | None:
        """The first occurrence at or after `instant` (None for a one-shot's own instant: it has no fixed one
        when it had no startTime; see `first`)."""
        nominal = self.engine.first_at_or_after(instant) if self.recurring else None
        exceptions = self.exceptions
        if not exceptions:
            return nominal
        nominal = exceptions.skip_forward(nominal, self._nominal_following)
        return earliest(nominal, exceptions.next_added(instant, inclusive=True))

    def following(self, occurrence: datetime) -> datetime | None:
        """The occurrence after `occurrence`, or None when the series ends there."""
        nominal = self._nominal_following(occurrence)
        exceptions = self.exceptions
        if not exceptions:
            return nominal
        nominal = exceptions.skip_forward(nominal, self._nominal_following)
        return earliest(nominal, exceptions.next_added(occurrence))

    def latest_missed(self, now: datetime) -> datetime | None:
        """The latest occurrence at or before now (what runs once after an outage)."""
        nominal = self.engine.last_at_or_before(now) if self.recurring else None
        exceptions = self.exceptions
        if not exceptions:
            return nominal
        nominal = exceptions.skip_back(nominal, self._nominal_previous)
        return latest(nominal, exceptions.previous_added(now, inclusive=True))

    def previous(self, occurrence: datetime) -> datetime | None:
        """The occurrence before `occurrence` (an occurrence of the series), or None when it is the first."""
        nominal = self._nominal_previous(occurrence)
        exceptions = self.exceptions
        if not exceptions:
            return nominal
        nominal = exceptions.skip_back(nominal, self._nominal_previous)
        return latest(nominal, exceptions.previous_added(occurrence))

    def is_added(self, occurrence: datetime) -> bool:
        """An exception put this instant in (a Move's target or an Add): it is outside the recurrence."""
        return occurrence in self.exceptions.added

    def dst_mark(self, occurrence: datetime) -> DstShift | None:
        """The DST mark of a run at `occurrence` (its ledger entry's `dstShift`), None when no change placed it."""
        shift = self.dst_shift(occurrence)
        return _DST_MARKS.get(shift) if shift is not None else None

    def placed(self, occurrence: datetime) -> LedgerReason | None:
        """Moved or Extra when an exception put this occurrence at its instant (its run's ledger entry says so)."""
        named = self.exceptions.reason_at(occurrence) if self.is_added(occurrence) else None
        return named[0] if named is not None else None

    def excepted(self, occurrence: datetime) -> tuple[LedgerReason, OccurrenceException] | None:
        """The exception that names `occurrence`, and the ledger reason it gives it (exceptions.py)."""
        return self.exceptions.reason_at(occurrence)

    def dst_shift(self, occurrence: datetime) -> str | None:
        """ "gap", "fold" or "fold-second" when a DST change moved the occurrence off its wall time
        (recurrence/series.py); None for an added instant."""
        if not self.recurring or self.is_added(occurrence):
            return None
        return self.engine.dst_shift(occurrence)

    def ends_with(self, occurrence: datetime) -> str | None:
        """What makes `occurrence` the last one: "count", "endTime", or "once" for a one-shot; None when more
        follow (or it is an added instant)."""
        if self.exceptions and (self.following(occurrence) is not None or self.is_added(occurrence)):
            return None
        if not self.recurring:
            return "once"
        if self.engine.end != occurrence:
            return None
        return self.engine.ends_by

    def repeat_count(self, occurrence: datetime) -> int:
        """History `repeatCount`: the occurrence's 1-based index in its series; 0 for an instant outside the
        counted series (run-now, an added instant, or an occurrence before the count origin)."""
        if self.is_added(occurrence):
            return 0
        if not self.recurring:
            return 1
        try:
            return self.engine.index_of(occurrence)
        except ValueError:
            return 0


def series_of(job: JobRecord) -> JobSeries:
    """The record's series, built on first use and kept with the record."""
    cached = job.series_cache
    if isinstance(cached, JobSeries):
        return cached
    series = JobSeries(job)
    object.__setattr__(job, "series_cache", series)  # a cache, not state: frozen records allow it here only
    return series


def keep_series(old: JobRecord, new: JobRecord) -> JobRecord:
    """`new` (a copy of `old` with its definition unchanged) keeps `old`'s series instead of building it again."""
    if isinstance(old.series_cache, JobSeries) and new.series_cache is None:
        object.__setattr__(new, "series_cache", old.series_cache)
    return new
