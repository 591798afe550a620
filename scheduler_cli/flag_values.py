"""The flags that build a job (job_flags.py): their options (`OPTIONS`, help included), and their values read into
the API's JSON members, one grammar each; a value that does not fit is a CliError (exit code 2) naming the flag
and the form it takes. Ranges the API checks (an interval's upper limit, a retry interval of at least 15 seconds,
a zone the engine knows when nothing here needs it) are left to the API, whose 400 names the member.

- `--every N<unit>`: m minutes, h hours, d days, w weeks, mo months, y years (N >= 1) -> (frequency, interval).
- `--at hh:mm` or `:mm` (minutes past every hour), repeatable and comma-separated -> (hours, minutes). The API
  runs every listed hour at every listed minute, so the times given must be all those combinations.
- `--on Mon,Fri` (names or their first three letters, any case; `Mon-Fri` a run of days) -> weekDays.
- `--start`/`--end`: ISO 8601; without an offset, a wall-clock time in the given zone -> UTC `...Z`.
- `--cron EXPR` -> recurrence.cron (the API reads the expression); `--dst-gap`, `--dst-fold` -> dstPolicy.
- `--retry none | fixed[:INTERVAL[:COUNT]] | exponential[:INTERVAL[:COUNT]]` -> a whole retryPolicy.
- `--header NAME=VALUE`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import typer

from shared.model.durations import parse_duration
from shared.recurrence import RecurrenceError
from shared.recurrence.validation import load_zone

from .client import USAGE_ERROR, CliError

OPTIONS: dict[str, tuple[Any, Any]] = {
    "uri": (
        str | None,
        typer.Option(None, "--uri", metavar="URL", help="The target: an Http action calling URL (Https for https://)."),
    ),
    "method": (
        str | None,
        typer.Option(
            None,
            "--method",
            metavar="METHOD",
            help="GET, POST, PUT, DELETE... Default GET (as the console's job form), POST with --body.",
        ),
    ),
    "body": (str | None, typer.Option(None, "--body", metavar="TEXT", help="The request's body; '' removes it.")),
    "header": (
        list[str] | None,
        typer.Option(
            None,
            "--header",
            metavar="NAME=VALUE",
            help="A request header (repeatable); replaces the header of that name.",
        ),
    ),
    "every": (
        str | None,
        typer.Option(
            None,
            "--every",
            metavar="N(m|h|d|w|mo|y)",
            help="How often: 5m, 2h, 1d, 1w, 1mo, 1y (minutes, hours, days, weeks, months, years). Without it, "
            "--on means 1w, --at 09:00 1d, --at :15 1h.",
        ),
    ),
    "at": (
        list[str] | None,
        typer.Option(
            None,
            "--at",
            metavar="HH:MM",
            help="At these times (repeatable, or 09:00,17:00; :15 for minutes past every hour). Every listed hour "
            "runs at every listed minute, so list all those times. '' removes them.",
        ),
    ),
    "on": (
        list[str] | None,
        typer.Option(
            None, "--on", metavar="DAYS", help="On these week days: Mon,Fri or Mon-Fri (weekly); '' removes them."
        ),
    ),
    "time_zone": (
        str | None,
        typer.Option(
            None,
            "--time-zone",
            metavar="ZONE",
            help="IANA zone (Europe/London): times and days are wall-clock there; default UTC; '' removes it.",
        ),
    ),
    "start": (
        str | None,
        typer.Option(
            None,
            "--start",
            metavar="TIME",
            help="startTime, ISO 8601: 2026-01-05T09:00 (in the job's time zone) or with Z or +01:00.",
        ),
    ),
    "end": (
        str | None,
        typer.Option(None, "--end", metavar="TIME", help="endTime: no run after it (as --start); '' removes it."),
    ),
    "cron": (
        str | None,
        typer.Option(
            None,
            "--cron",
            metavar="EXPR",
            help="recurrence.cron: five fields (minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5') or "
            "a macro (@daily), wall-clock in --time-zone; the whole schedule, so not with --every, --at, --on. "
            "'' removes it.",
        ),
    ),
    "dst_gap": (
        str | None,
        typer.Option(
            None,
            "--dst-gap",
            metavar="Shift|Skip",
            help="recurrence.dstPolicy.gap (needs a time zone): a wall time a spring-forward change skips runs just "
            "after it (Shift, the default) or not at all (Skip); '' removes it.",
        ),
    ),
    "dst_fold": (
        str | None,
        typer.Option(
            None,
            "--dst-fold",
            metavar="First|Last|Both",
            help="recurrence.dstPolicy.fold (needs a time zone): a wall time a fall-back change repeats runs at its "
            "First instance (the default), its Last or Both; '' removes it.",
        ),
    ),
    "retry": (
        str | None,
        typer.Option(
            None,
            "--retry",
            metavar="POLICY",
            help="The retry policy: none, or fixed or exponential with :INTERVAL and :COUNT (fixed:PT30S:4); "
            "without it the API's default, fixed:PT30S:4.",
        ),
    ),
}
UNITS = {"m": "Minute", "h": "Hour", "d": "Day", "w": "Week", "mo": "Month", "y": "Year"}
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def refuse(flag: str, value: str | None, message: str) -> CliError:
    shown = f" {value!r}" if value is not None else ""
    return CliError("InvalidOption", f"{flag}{shown}: {message}", USAGE_ERROR)


def every(value: str) -> tuple[str, int]:
    found = re.fullmatch(r"\s*(\d+)\s*(mo|m|h|d|w|y)\s*", value.lower())
    if not found or int(found.group(1)) < 1:
        raise refuse(
            "--every",
            value,
            "write N (1 or more) and a unit: 5m (minutes), 2h (hours), 1d (days), 1w (weeks), 1mo (months), 1y (years)",
        )
    return UNITS[found.group(2)], int(found.group(1))


def _items(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def times(values: list[str]) -> tuple[list[int] | None, list[int]]:
    """(hours, minutes); hours None for `:mm` times (minutes past every hour)."""
    items = _items(values)
    shown = ",".join(items)
    if all(re.fullmatch(r":\d{1,2}", item) for item in items):
        minutes = sorted({int(item[1:]) for item in items})
        if any(m > 59 for m in minutes):
            raise refuse("--at", shown, "a minute is 0 to 59")
        return None, minutes
    parsed = [re.fullmatch(r"(\d{1,2}):(\d{2})", item) for item in items]
    if not all(parsed):
        raise refuse("--at", shown, "write times as hh:mm (09:00,17:30), or :mm for minutes past every hour (:15,:45)")
    pairs = {(int(m.group(1)), int(m.group(2))) for m in parsed if m}
    if any(h > 23 or m > 59 for h, m in pairs):
        raise refuse("--at", shown, "hours are 0 to 23, minutes 0 to 59")
    hours, minutes = sorted({h for h, _ in pairs}), sorted({m for _, m in pairs})
    missing = [f"{h:02d}:{m:02d}" for h in hours for m in minutes if (h, m) not in pairs]
    if missing:
        raise refuse(
            "--at",
            shown,
            f"the API runs every listed hour at every listed minute, so this would also run at {', '.join(missing)}: "
            "list those too, or make two jobs",
        )
    return hours, minutes


def _day(text: str, shown: str) -> int:
    for i, day in enumerate(DAYS):
        if text.lower() in (day.lower(), day[:3].lower()):
            return i
    raise refuse("--on", shown, f"{text!r} is not a week day: write Mon,Fri (or Monday,Friday), or Mon-Fri")


def week_days(values: list[str]) -> list[str]:
    items = _items(values)
    shown = ",".join(items)
    chosen: set[int] = set()
    for item in items:
        first, dash, last = item.partition("-")
        start = _day(first.strip(), shown)
        end = _day(last.strip(), shown) if dash else start
        chosen.update((start + i) % 7 for i in range((end - start) % 7 + 1))
    return [DAYS[i] for i in sorted(chosen)]


def instant(flag: str, value: str, zone: str | None) -> str:
    """UTC `YYYY-MM-DDTHH:MM:SSZ`; a value without an offset is a wall-clock time in `zone` (UTC when None)."""
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise refuse(
            flag, value, "write an ISO 8601 time: 2026-01-05T09:00 (in the job's time zone), or with Z or +01:00"
        ) from None
    if parsed.tzinfo is None:
        try:
            parsed = parsed.replace(tzinfo=load_zone(zone) if zone else UTC)
        except RecurrenceError as error:
            raise refuse("--time-zone", zone, f"{error.message} (needed for {flag} {value})") from None
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


DST_CHOICES = {"--dst-gap": ("Shift", "Skip"), "--dst-fold": ("First", "Last", "Both")}


def dst(flag: str, value: str) -> str | None:
    """The policy as the API spells it (any case given); None for '' (removes it)."""
    if not value.strip():
        return None
    for choice in DST_CHOICES[flag]:
        if value.strip().lower() == choice.lower():
            return choice
    raise refuse(flag, value, f"write {' or '.join(DST_CHOICES[flag])}")


def retry(value: str) -> dict[str, Any]:
    """The whole retryPolicy; None for a member the API then defaults (PT30S, 4)."""
    kind, *rest = value.strip().split(":")
    form = "write none, fixed or exponential, optionally :INTERVAL (ISO 8601, PT30S) and :COUNT (fixed:PT30S:4)"
    types = {"none": "None", "fixed": "Fixed", "exponential": "Exponential"}
    if kind.lower() not in types or len(rest) > 2 or (kind.lower() == "none" and rest):
        raise refuse("--retry", value, form)
    interval, count = (rest + [None, None])[:2]
    if interval is not None:
        try:
            parse_duration(interval)
        except ValueError:
            raise refuse("--retry", value, f"INTERVAL {interval!r} is not a duration; {form}") from None
    if count is not None and not count.isdigit():
        raise refuse("--retry", value, f"COUNT {count!r} is not a whole number; {form}")
    return {
        "retryType": types[kind.lower()],
        "retryInterval": interval or None,
        "retryCount": int(count) if count else None,
        "maxRetryInterval": None,
    }


def header(value: str) -> tuple[str, str]:
    name, equals, text = value.partition("=")
    if not equals or not name.strip():
        raise refuse("--header", value, "write NAME=VALUE, e.g. Content-Type=application/json")
    return name.strip(), text
