"""Instants as the CLI shows them in tables and messages: in the job's own time zone (`recurrence.timeZone`, an
extension of the newer api-version) with UTC beside, else in UTC, always labelled; `-o json` keeps the API's UTC
instants untouched.

The one format, the console's too (shared/console/static/zones.js `zoned`):
- `2026-03-29 09:00:00 Europe/Berlin (07:00:00 UTC)`: wall-clock time in the zone, UTC beside, and UTC's date
  too when it is another day (`2026-03-30 06:00:00 Pacific/Auckland (2026-03-29 17:00:00 UTC)`);
- `2026-03-29 07:00:00 UTC` for a job without a zone (or with UTC, or a zone this machine does not know);
- `date=False` leaves out the zone's date (a time of day under an occurrence of the same day).

The global `--times-in ZONE` (env SCHEDULER_TIMES_IN) shows every time in that IANA zone, or in UTC (`UTC`),
whatever each job's zone; an unknown zone is refused (one line, with the likely name meant).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from typing import Any

import typer

from shared.recurrence import RecurrenceError
from shared.recurrence.validation import load_zone
from shared.recurrence.zone_names import legacy_warning

_UTC_NAMES = re.compile(r"^(utc|etc/utc|etc/gmt|gmt|z)$", re.IGNORECASE)


def is_utc(zone: str | None) -> bool:
    return not zone or bool(_UTC_NAMES.match(zone))


def job_zone(job: Any) -> str | None:
    """The time zone of a job document, or of its properties; None for UTC."""
    if not isinstance(job, dict):
        return None
    properties = job.get("properties") if isinstance(job.get("properties"), dict) else job
    zone = (properties.get("recurrence") or {}).get("timeZone") if isinstance(properties, dict) else None
    return zone if isinstance(zone, str) and not is_utc(zone) else None


def instant(value: Any) -> datetime | None:
    """An instant of the wire (ISO 8601 text, `Z` or an offset; no offset is UTC), or a datetime; None otherwise."""
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _zone(name: str | None) -> tzinfo | None:
    if is_utc(name):
        return None
    try:
        return load_zone(name)
    except RecurrenceError:
        return None


def labelled(value: Any, zone: str | None, *, date: bool = True) -> str:
    """`value` in the module's format; `-` when absent, the text as given when it is no instant."""
    if value is None or value == "":
        return "-"
    when = instant(value)
    if when is None:
        return str(value)
    utc = when.astimezone(UTC)
    where = _zone(zone)
    if where is None:
        return f"{utc:%Y-%m-%d %H:%M:%S} UTC" if date else f"{utc:%H:%M:%S} UTC"
    local = when.astimezone(where)
    beside = f"{utc:%H:%M:%S}" if local.date() == utc.date() else f"{utc:%Y-%m-%d %H:%M:%S}"
    return f"{local:%Y-%m-%d %H:%M:%S} {zone} ({beside} UTC)" if date else f"{local:%H:%M:%S} {zone} ({beside} UTC)"


def same_day(value: Any, other: Any, zone: str | None) -> bool:
    """Both instants fall on one date of `zone`'s calendar (UTC's when None)."""
    a, b = instant(value), instant(other)
    where = _zone(zone) or UTC
    return a is not None and b is not None and a.astimezone(where).date() == b.astimezone(where).date()


def times_in_option(value: str | None) -> str | None:
    """The `--times-in` value: an IANA zone name, or UTC; refused (BadParameter, one line) when unknown."""
    if value is None or not value.strip():
        return None
    name = value.strip()
    if is_utc(name):
        return "UTC"
    try:
        load_zone(name)
    except RecurrenceError as error:
        raise typer.BadParameter(error.message) from None
    return name


def legacy_zone_warnings(properties: Any) -> list[str]:
    """A warning for a job's legacy zone name (EST: a fixed UTC-5), which the API accepts as it always did."""
    recurrence = properties.get("recurrence") if isinstance(properties, dict) else None
    zone = recurrence.get("timeZone") if isinstance(recurrence, dict) else None
    found = legacy_warning(zone) if isinstance(zone, str) else None
    return [found] if found else []
