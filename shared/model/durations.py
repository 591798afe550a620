"""Durations on the wire: ISO 8601 (`PT30S`, `P1DT2H`) or .NET TimeSpan (`[d.]hh:mm:ss[.fff]`).

DECISIONS.md: accept both, read TimeSpan days literally, emit ISO 8601 (the official Python client
parses it).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_ISO = re.compile(
    r"^P(?!$)(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)
_TIMESPAN = re.compile(r"^(?:(?P<days>\d+)\.)?(?P<hours>\d{1,2}):(?P<minutes>\d{1,2}):(?P<seconds>\d{1,2}(?:\.\d+)?)$")


def parse_duration(value: Any) -> timedelta:
    """Parse either wire form; raise ValueError (never OverflowError) with a message naming both accepted forms."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            match = _ISO.match(text)
            if match:
                parts = {k: float(v) for k, v in match.groupdict().items() if v}
                return timedelta(
                    weeks=parts.get("weeks", 0), days=parts.get("days", 0), hours=parts.get("hours", 0),
                    minutes=parts.get("minutes", 0), seconds=parts.get("seconds", 0),
                )
            match = _TIMESPAN.match(text)
            if match and int(match["hours"]) < 24 and int(match["minutes"]) < 60 and float(match["seconds"]) < 60:
                return timedelta(
                    days=int(match["days"] or 0), hours=int(match["hours"]),
                    minutes=int(match["minutes"]), seconds=float(match["seconds"]),
                )
        except OverflowError:  # well-formed but beyond timedelta (999,999,999 days): a 400, not a 500
            raise ValueError(f"'{value}' is too long a duration") from None
    raise ValueError(f"'{value}' is not a duration: use ISO 8601 (PT30S) or d.hh:mm:ss")


def format_duration(value: timedelta) -> str:
    """ISO 8601, days as `D` (never months or years, which have no fixed length)."""
    total = value.total_seconds()
    days, rest = divmod(int(total), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    fraction = total - int(total)
    text = "P" + (f"{days}D" if days else "")
    time = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or fraction:
        time += f"{seconds + fraction:g}S"
    if time:
        text += "T" + time
    return text if text != "P" else "PT0S"


Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema({"type": "string", "format": "duration", "example": "PT30S"}),
]
