"""Durations on the wire: ISO 8601 (`PT30S`, `P1DT2H`) or .NET TimeSpan (`[d.]hh:mm:ss[.fffffff]`).

Contract (docs/decisions.md, "Wire contract"): accept both forms, read TimeSpan days literally, emit
ISO 8601 (the official Python client parses it). Every accepted duration round-trips exactly: the
parsed value, stored and read back, is equal and renders to the same text again (tests/model/test_round_trip.py).

Hand-written rather than isodate on purpose: the old service's durations were .NET TimeSpans, whose unit is
the 100 ns tick (`00:00:59.1234567` is a legal value a .NET client sends), while isodate and `timedelta`
stop at the microsecond. Parsing is exact integer arithmetic (no float: `PT0.00001S` once became `1e-05`),
and the sub-microsecond tick rides along on the `Ticks` value so it is rendered back as received.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

TICKS_PER_SECOND = 10_000_000
_TICKS_PER_DAY = 86_400 * TICKS_PER_SECOND
_MAX_TICKS = timedelta.max // timedelta(microseconds=1) * 10 + 9
_FRACTION_DIGITS = 7  # one tick = 100 ns, the resolution of .NET TimeSpan

_ISO = re.compile(
    r"^P(?!$)(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+)(?:\.(?P<fraction>\d+))?S)?)?$",
    re.IGNORECASE,
)
_TIMESPAN = re.compile(
    r"^(?:(?P<days>\d+)\.)?(?P<hours>\d{1,2}):(?P<minutes>\d{1,2}):(?P<seconds>\d{1,2})(?:\.(?P<fraction>\d+))?$"
)


class Ticks(timedelta):
    """A timedelta that also remembers the tenth of a microsecond (0-9) a TimeSpan may carry.

    Arithmetic gives plain timedeltas (the sub-microsecond part does not matter to scheduling); only
    rendering reads `extra`.
    """

    extra: int = 0

    @classmethod
    def from_ticks(cls, ticks: int) -> Ticks:
        micros, extra = divmod(ticks, 10)
        value = cls(microseconds=micros)
        value.extra = extra
        return value

    def __reduce__(self) -> tuple[Any, ...]:  # copy/deepcopy/pickle keep the tick
        return Ticks.from_ticks, (self.total_ticks(),)

    def total_ticks(self) -> int:
        return (self.days * 86_400 + self.seconds) * TICKS_PER_SECOND + self.microseconds * 10 + self.extra


def _fraction_ticks(fraction: str | None, value: str) -> int:
    if not fraction:
        return 0
    if len(fraction) > _FRACTION_DIGITS and fraction[_FRACTION_DIGITS:].strip("0"):
        raise ValueError(f"'{value}' has more than {_FRACTION_DIGITS} fractional digits (the unit is 100 ns)")
    return int(fraction[:_FRACTION_DIGITS].ljust(_FRACTION_DIGITS, "0"))


def _to_ticks(text: str) -> int | None:
    match = _ISO.match(text)
    if match:
        part = {k: int(v) for k, v in match.groupdict().items() if v and k != "fraction"}
        seconds = (
            ((part.get("weeks", 0) * 7 + part.get("days", 0)) * 24 + part.get("hours", 0)) * 60 + part.get("minutes", 0)
        ) * 60 + part.get("seconds", 0)
        return seconds * TICKS_PER_SECOND + _fraction_ticks(match["fraction"], text)
    match = _TIMESPAN.match(text)
    if match and int(match["hours"]) < 24 and int(match["minutes"]) < 60 and int(match["seconds"]) < 60:
        seconds = ((int(match["days"] or 0) * 24 + int(match["hours"])) * 60 + int(match["minutes"])) * 60 + int(
            match["seconds"]
        )
        return seconds * TICKS_PER_SECOND + _fraction_ticks(match["fraction"], text)
    return None


def parse_duration(value: Any) -> timedelta:
    """Parse either wire form; raise ValueError (never OverflowError) with a message naming both accepted forms."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str):
        ticks = _to_ticks(value.strip())
        if ticks is not None:
            if ticks > _MAX_TICKS:  # beyond timedelta (999,999,999 days): a 400, not a 500
                raise ValueError(f"'{value}' is too long a duration")
            return Ticks.from_ticks(ticks)
    raise ValueError(f"'{value}' is not a duration: use ISO 8601 (PT30S) or d.hh:mm:ss")


def format_duration(value: timedelta) -> str:
    """ISO 8601 with days as `D` (never months or years, which have no fixed length), exact to the tick."""
    ticks = (
        value.total_ticks()
        if isinstance(value, Ticks)
        else ((value.days * 86_400 + value.seconds) * TICKS_PER_SECOND + value.microseconds * 10)
    )
    sign = "-" if ticks < 0 else ""
    days, rest = divmod(abs(ticks), _TICKS_PER_DAY)
    hours, rest = divmod(rest, 3600 * TICKS_PER_SECOND)
    minutes, rest = divmod(rest, 60 * TICKS_PER_SECOND)
    seconds, fraction = divmod(rest, TICKS_PER_SECOND)
    time = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or fraction:
        time += str(seconds) + (f".{fraction:07d}".rstrip("0") if fraction else "") + "S"
    text = (f"{days}D" if days else "") + (f"T{time}" if time else "")
    return f"{sign}P{text}" if text else "PT0S"


Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema({"type": "string", "format": "duration", "example": "PT30S"}),
]
