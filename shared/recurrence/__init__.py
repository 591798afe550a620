"""Recurrence engine: when does a job with this startTime and recurrence run next?

Pure and standard-library only. Typical use::

    series = OccurrenceSeries(start_time, Recurrence(Frequency.DAY, schedule=Schedule(hours=(5,))))
    series.next_after(now)        # next run, or None when the series is over
    series.index_of(occurrence)   # history repeatCount
    series.min_gap()              # for the maxRecurrence quota

See :class:`OccurrenceSeries` for the contract and ``expansion`` for the
defaulting rules.
"""

from .errors import RecurrenceError
from .model import Frequency, MonthlyOccurrence, Recurrence, Schedule, WeekDay
from .series import OccurrenceSeries
from .validation import INTERVAL_LIMITS, validate_recurrence

__all__ = [
    "INTERVAL_LIMITS",
    "Frequency",
    "MonthlyOccurrence",
    "OccurrenceSeries",
    "Recurrence",
    "RecurrenceError",
    "Schedule",
    "WeekDay",
    "validate_recurrence",
]
