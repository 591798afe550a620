"""What a job write checks of its occurrence control (model/occurrence_control.py): exceptions, pause and DST
policy, against the job's own series; and the exceptions a write prunes.

Rules (docs/decisions.md, "Occurrence control"):
- `dstPolicy` needs a `timeZone` (without one no DST change moves anything: the policy would be ignored);
- a `Skip` or a `Move` names an occurrence of the job's recurrence, else a 400 names the nearest occurrences before
  and after; an `Add` or a `moveTo` is not already an occurrence that runs; no instant is named by two exceptions;
- an exception or a pause the job did not have before names only instants still ahead (it could change nothing
  otherwise); one it had is accepted as it is, so a read-modify-write of an older state still writes back;
- `pruned`: an exception whose every instant is more than EXCEPTION_KEPT_FOR past is dropped by the write.
"""

from __future__ import annotations

from datetime import datetime

from ..jobstate import series_of
from ..model import ExceptionType, JobPause, JobProperties, OccurrenceException, format_utc
from ..model.occurrence_control import EXCEPTION_KEPT_FOR
from ..records import JobRecord
from .errors import InvalidDefinition as Invalid


def _instants(exception: OccurrenceException) -> tuple[datetime, ...]:
    return (exception.occurrence,) if exception.move_to is None else (exception.occurrence, exception.move_to)


def pruned(properties: JobProperties, now: datetime) -> list[OccurrenceException] | None:
    """The job's exceptions without those long past (None stays None: absent is not an empty list)."""
    if properties.exceptions is None:
        return None
    return [e for e in properties.exceptions if max(_instants(e)) > now - EXCEPTION_KEPT_FOR]


def check(record: JobRecord, existing: JobRecord | None, now: datetime) -> None:
    """InvalidDefinition unless the record's exceptions, pause and DST policy hold together with its series."""
    properties = record.properties
    recurrence = properties.recurrence
    if recurrence is not None and recurrence.dst_policy is not None and not recurrence.time_zone:
        raise Invalid(
            "dstPolicy needs a timeZone: without one no DST change moves an occurrence.",
            "properties.recurrence.dstPolicy",
        )
    before = existing.properties if existing is not None else None
    check_pause(properties.pause, before.pause if before is not None else None, now)
    had = set(map(_key, before.exceptions or ())) if before is not None else set()
    named: dict[datetime, int] = {}
    for i, exception in enumerate(properties.exceptions or ()):
        path = f"properties.exceptions[{i}]"
        if _key(exception) not in had and min(_instants(exception)) <= now:
            raise Invalid(f"the exception names {format_utc(min(_instants(exception)))}, which is past.", path)
        for instant in _instants(exception):
            if instant in named:
                raise Invalid(
                    f"{format_utc(instant)} is named by exceptions {named[instant]} and {i}; one exception per "
                    "instant.",
                    path,
                )
            named[instant] = i
        _check_one(record, exception, path)


def check_pause(pause: JobPause | None, before: JobPause | None, now: datetime) -> None:
    """A pause (of a job or a collection) the write sets ends later than now; one it had is kept as it is."""
    if pause is not None and pause != before and pause.until <= now:
        raise Invalid(f"until must be later than now ({format_utc(now)}).", "properties.pause.until")


def _key(exception: OccurrenceException) -> tuple[object, ...]:
    return (exception.type, exception.occurrence, exception.move_to)


def _check_one(record: JobRecord, exception: OccurrenceException, path: str) -> None:
    series = series_of(record)
    nominal = _is_nominal(record, exception.occurrence)
    if exception.type != ExceptionType.ADD and not nominal:
        instant = exception.occurrence
        raise Invalid(
            f"{format_utc(instant)} is not an occurrence of the job; {_nearest(record, instant)}.", f"{path}.occurrence"
        )
    put_in = exception.move_to if exception.type == ExceptionType.MOVE else None
    if exception.type == ExceptionType.ADD:
        put_in = exception.occurrence
    if put_in is not None and _is_nominal(record, put_in) and put_in not in series.exceptions.removed:
        member = "moveTo" if exception.type == ExceptionType.MOVE else "occurrence"
        raise Invalid(f"{format_utc(put_in)} is an occurrence of the job already.", f"{path}.{member}")


def _is_nominal(record: JobRecord, instant: datetime) -> bool:
    """An occurrence of the job's recurrence (its startTime, for a one-shot)."""
    series = series_of(record)
    if not series.recurring:
        return record.properties.start_time == instant
    return series.engine.first_at_or_after(instant) == instant


def _nearest(record: JobRecord, instant: datetime) -> str:
    """The occurrences of the recurrence on either side of `instant`, as a 400 names them."""
    series = series_of(record)
    if not series.recurring:
        start = record.properties.start_time
        return f"its only occurrence is {format_utc(start)}" if start else "it has no fixed occurrence (no startTime)"
    before = series.engine.last_at_or_before(instant)
    after = series.engine.next_after(instant)
    found = [f"{label} {format_utc(x)}" for label, x in (("before it", before), ("after it", after)) if x]
    return "the nearest occurrences: " + ", ".join(found) if found else "the job has no occurrence left"
