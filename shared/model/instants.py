"""Instants on the wire: ISO 8601 date-times in UTC, exact to the 100 ns tick of a .NET DateTime.

Contract (docs/decisions.md, "Wire values"): accepted with `Z`, with an offset or with none (UTC), `T` or a
space, `.` or `,` before the fraction, or a date alone; normalised to UTC; emitted with `Z` and fractional
digits only when the value has them (trailing zeros trimmed, as Json.NET writes them). The old service was
.NET: its clients send 7 fractional digits (`2017-02-09T23:55:25.5648511Z`) and it echoed startTime and
recurrence.endTime exactly so (docs/wire-contract.md §7), so the 7th digit is kept; digits beyond it are
dropped. Scheduling stays to the second (the recurrence engine floors every instant).

Hand-written on top of pydantic's parser on purpose: Python's datetime stops at the microsecond. The tick
rides along on `Instant.extra` (tenths of a microsecond, 0-9), as `Ticks` carries it for durations;
arithmetic and `replace` give it up (the sub-microsecond part does not matter to scheduling).

An instant sent outside a body (a query parameter, a backfill bound: `parse_instant_text`) is read by the same
parser, and as strictly: ISO 8601 text alone, no Unix seconds, nothing before or after it (no whitespace, no NUL
or other control character).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import PlainSerializer, TypeAdapter, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

# The fraction of an instant's time of day (`23:55:25.5648511`, or with a comma): its 7th digit is the tick.
_FRACTION = re.compile(r"\d\d:\d\d:\d\d[.,](\d+)")


class Instant(datetime):
    """A datetime that also remembers the tenth of a microsecond (0-9) a .NET DateTime may carry."""

    extra: int = 0

    @classmethod
    def of(cls, value: datetime, extra: int) -> Instant:
        instant = cls(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            value.tzinfo,
            fold=value.fold,
        )
        instant.extra = extra
        return instant

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:  # copy/deepcopy/pickle keep the tick
        plain = datetime(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.microsecond,
            self.tzinfo,
            fold=self.fold,
        )
        return Instant.of, (plain, self.extra)


def to_utc(value: datetime) -> datetime:
    """Naive instants are UTC (the old service's rule); offsets are normalised to UTC.

    ValueError (a 400 in a model) when the UTC instant falls outside years 1-9999, e.g. 0001-01-01T00:00+01:00.
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the instant in UTC is outside the years 1 to 9999") from None


def _tick_of(value: Any) -> int:
    """The 7th fractional digit of an instant as sent (0 when there is none)."""
    if isinstance(value, Instant):
        return value.extra
    if isinstance(value, str):
        match = _FRACTION.search(value)
        if match is not None and len(match[1]) > 6:
            return int(match[1][6])
    return 0


def parse_instant(value: Any, handler: ValidatorFunctionWrapHandler) -> datetime:
    """pydantic parses the text (to the microsecond); the tick is read from the text beside it."""
    extra = _tick_of(value)
    parsed = to_utc(handler(value))
    return Instant.of(parsed, extra) if extra else parsed


def format_utc(value: datetime) -> str:
    """ISO 8601 with a `Z`; fractional seconds only when present (up to 7 digits), like the real service."""
    extra = value.extra if isinstance(value, Instant) else 0
    value = to_utc(value)
    # The year by hand: glibc's %Y does not pad years before 1000 ("1-01-01"), which no parser reads back.
    text = f"{value.year:04d}-{value:%m-%dT%H:%M:%S}"
    if value.microsecond or extra:
        text += f".{value.microsecond * 10 + extra:07d}".rstrip("0")
    return text + "Z"


UtcDateTime = Annotated[datetime, WrapValidator(parse_instant), PlainSerializer(format_utc, return_type=str)]

_TEXT = TypeAdapter(UtcDateTime)
_DATE_FIRST = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # the parser also takes digits alone as Unix seconds


def parse_instant_text(text: object) -> datetime:
    """An ISO 8601 instant given as text outside a body (normalised to UTC, its tick kept); ValueError with the
    reason otherwise."""
    if not isinstance(text, str) or not _DATE_FIRST.match(text):
        raise ValueError("not an ISO 8601 date-time")
    try:
        return _TEXT.validate_python(text)
    except ValidationError as exc:
        outside = any(e["type"] == "value_error" for e in exc.errors())
        raise ValueError("outside the years 1 to 9999 in UTC" if outside else "not an ISO 8601 date-time") from None
