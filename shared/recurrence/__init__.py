"""Recurrence engine: when does a job with this startTime and recurrence run next?

Pure and standard-library only. Typical use::

    series = OccurrenceSeries(start_time, Recurrence(Frequency.DAY, schedule=Schedule(hours=(5,))))
    series.next_after(now)        # next run, or None when the series is over
    series.index_of(occurrence)   # history repeatCount
    series.min_gap()              # for the maxRecurrence quota
    OccurrenceSeries(start_time, Recurrence(Frequency.DAY, cron="30 9 * * 1-5", time_zone="Europe/Berlin"))

See :class:`OccurrenceSeries` for the contract and ``expansion`` for the
defaulting rules; :mod:`.cron` for cron expressions (``parse_cron`` checks one
without a series, raising :class:`RecurrenceError` at path ``cron``).
"""

from .cron import CronExpression, parse_cron
from .errors import RecurrenceError
from .model import FoldPolicy, Frequency, GapPolicy, MonthlyOccurrence, Recurrence, Schedule, WeekDay
from .series import OccurrenceSeries
from .validation import INTERVAL_LIMITS, validate_recurrence

__all__ = [
    "CronExpression",
    "INTERVAL_LIMITS",
    "FoldPolicy",
    "Frequency",
    "GapPolicy",
    "MonthlyOccurrence",
    "OccurrenceSeries",
    "Recurrence",
    "RecurrenceError",
    "Schedule",
    "WeekDay",
    "parse_cron",
    "validate_recurrence",
]
