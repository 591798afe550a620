"""A job from flags, for the common cases, so `scheduler jobs create|update` need no JSON file (and `scheduler next`
takes the same schedule flags). The flags build the API's own JobDefinition members (api-version
2026-12-01-preview, which the CLI speaks), so a job created from flags reads back equal to the same job created from
the equivalent JSON.

Contract:
- Each flag sets its own members; over a `--file` the flags win and the file's other members are kept. `update`
  sends them in its PATCH (the API keeps what is not sent); `''` removes a member.
- Target: `--uri` (an Http action; Https for an https:// URL), `--method` (default GET, as the console's job
  form; POST when `--body` is given, as curl's -d), `--body`, `--header NAME=VALUE` (repeatable; one of the same
  name in any case is replaced). An action of another kind becomes an Http action only through `--uri`.
- Schedule: `--every`, `--at`, `--on`, `--time-zone`, `--start`, `--end` (grammar: flag_values.py). Without `--every`
  and without a frequency already (the file's, or the stored job's), `--on` means every week, `--at hh:mm` every
  day, `--at :mm` every hour. `--every` in another unit than weeks drops the week days (and than months the month
  days), which the API takes only with that frequency. `--start`/`--end` without an offset are wall-clock times in
  `--time-zone`, else the job's zone, else UTC.
- Cron: `--cron EXPR` sets recurrence.cron and drops frequency, interval and schedule (a cron expression is the
  whole schedule: refused with `--every`, `--at`, `--on`); those flags, or `--cron ''`, drop a cron. `--dst-gap`,
  `--dst-fold` set recurrence.dstPolicy (the API refuses one without a time zone; both `''` remove it).
- Retry: `--retry` sets the whole retryPolicy of the main action.
- Contradictory or incomplete flags are a CliError (one line, exit code 2) before anything is sent: `--on` with a
  frequency other than weeks, a time zone or end without a schedule, `--method`/`--body`/`--header` for an action
  that is not Http, a create with neither `--uri` nor `--file`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from . import flag_values as values
from .client import USAGE_ERROR, CliError

F = TypeVar("F", bound=Callable[..., Any])

TARGET = ("uri", "method", "body", "header")
SCHEDULE = ("every", "at", "on", "time_zone", "start", "end")
CALENDAR = ("cron", "dst_gap", "dst_fold")  # of a stored job only: `scheduler next` reads plain recurrences
JOB = (*TARGET, *SCHEDULE, *CALENDAR, "retry")
_OTHER_TARGETS = ("queueMessage", "serviceBusQueueMessage", "serviceBusTopicMessage")


@dataclass(frozen=True)
class JobFlags:
    uri: str | None = None
    method: str | None = None
    body: str | None = None
    header: list[str] | None = None
    every: str | None = None
    at: list[str] | None = None
    on: list[str] | None = None
    time_zone: str | None = None
    start: str | None = None
    end: str | None = None
    cron: str | None = None
    dst_gap: str | None = None
    dst_fold: str | None = None
    retry: str | None = None

    def given(self, *names: str) -> list[str]:
        """The flags given, among `names` (all when none are named), as `--time-zone`."""
        return [
            "--" + f.name.replace("_", "-")
            for f in fields(self)
            if (not names or f.name in names) and getattr(self, f.name) not in (None, [], ())
        ]


def job_flag_options(*names: str) -> Callable[[F], F]:
    """The command takes the options `names` (default: all) and receives them as one `flags: JobFlags`."""
    chosen = names or JOB

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return command(*args, flags=JobFlags(**{name: kwargs.pop(name) for name in chosen}), **kwargs)

        signature = inspect.signature(command, eval_str=True)
        added = [
            inspect.Parameter(
                n, inspect.Parameter.KEYWORD_ONLY, annotation=values.OPTIONS[n][0], default=values.OPTIONS[n][1]
            )
            for n in chosen
        ]
        kept = [p for p in signature.parameters.values() if p.name != "flags"]
        wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {
            **{k: v for k, v in command.__annotations__.items() if k != "flags"},
            **{n: values.OPTIONS[n][0] for n in chosen},
        }
        return wrapper  # type: ignore[return-value]

    return decorate


_ABSENT = object()


def _dig(document: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return _ABSENT
        document = document[key]
    return document


class _Members:
    """The properties being written (a PUT's, or a PATCH's over `stored`, the job as stored)."""

    def __init__(self, properties: dict[str, Any], stored: dict[str, Any] | None) -> None:
        self.doc, self.stored = properties, stored

    def get(self, *path: str) -> Any:
        for source in (self.doc, self.stored):
            found = _dig(source, path)
            if found is not _ABSENT:
                return found
        return None

    def names(self, *path: str) -> set[str]:
        """The members of an object, written or stored."""
        return {
            key for source in (self.doc, self.stored) if isinstance(found := _dig(source, path), dict) for key in found
        }

    def set(self, value: Any, *path: str) -> None:
        """None removes the member: absent from a PUT; null in a PATCH when it is stored (else absent)."""
        if value is None and (self.stored is None or _dig(self.stored, path) is _ABSENT):
            parent = _dig(self.doc, path[:-1])
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
            return
        node = self.doc
        for key in path[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[path[-1]] = value


def require_target(has_file: bool, flags: JobFlags) -> None:
    """A create needs a target: the file's action or --uri."""
    if not has_file and flags.uri is None:
        given = f" ({', '.join(flags.given())} given)" if flags.given() else ""
        raise CliError(
            "IncompleteJob",
            f"a job needs a target: pass --uri URL (an Http action; --every, --at, --on for its schedule), "
            f"or --file with a JobDefinition{given}",
            USAGE_ERROR,
        )


def apply_flags(properties: dict[str, Any], flags: JobFlags, stored: dict[str, Any] | None = None) -> None:
    """Set the members the flags give in `properties` (a PUT's; a PATCH's when `stored` is the stored job's)."""
    members = _Members(properties, stored)
    _target(members, flags)
    _schedule(members, flags)
    if flags.retry is not None:
        for key, value in values.retry(flags.retry).items():
            members.set(value, "action", "retryPolicy", key)


def _target(m: _Members, flags: JobFlags) -> None:
    if not flags.given(*TARGET):
        return
    kind = str(m.get("action", "type") or "")
    if flags.uri is not None:
        if m.stored is None and kind.lower() not in ("", "http", "https"):
            for member in _OTHER_TARGETS:  # the flag wins; in a PATCH the API drops the old kind's target itself
                m.set(None, "action", member)
        m.set("Https" if flags.uri.strip().lower().startswith("https://") else "Http", "action", "type")
        m.set(flags.uri.strip(), "action", "request", "uri")
    elif kind.lower() not in ("http", "https"):
        others = ", ".join(flags.given("method", "body", "header"))
        what = f"the job's action is {kind}" if kind else "there is no target"
        raise CliError(
            "InvalidOption", f"{others} set an Http action's request and {what}: give --uri URL too", USAGE_ERROR
        )
    if flags.method is not None:
        if not flags.method.strip():
            raise values.refuse("--method", flags.method, "name a method: GET, POST, PUT, DELETE...")
        m.set(flags.method.strip().upper(), "action", "request", "method")
    if flags.body is not None:
        m.set(flags.body or None, "action", "request", "body")
    if m.get("action", "request", "method") is None:
        m.set("POST" if m.get("action", "request", "body") else "GET", "action", "request", "method")
    for text in flags.header or []:
        name, value = values.header(text)
        for other in m.names("action", "request", "headers"):
            if other.lower() == name.lower() and other != name:
                m.set(None, "action", "request", "headers", other)
        m.set(value, "action", "request", "headers", name)


def _schedule(m: _Members, flags: JobFlags) -> None:
    zone = flags.time_zone.strip() if flags.time_zone is not None else m.get("recurrence", "timeZone")
    if flags.start is not None:
        start = values.instant("--start", flags.start, zone or None) if flags.start.strip() else None
        m.set(start, "startTime")
    recurring = flags.given("every", "at", "on", "time_zone", "end", *CALENDAR)
    if not recurring:
        return
    if not _cron(m, flags):
        _calendar(m, flags, recurring)
    if flags.time_zone is not None:
        m.set(zone or None, "recurrence", "timeZone")
    if flags.end is not None:
        m.set(values.instant("--end", flags.end, zone or None) if flags.end.strip() else None, "recurrence", "endTime")
    for flag, text, member in (("--dst-gap", flags.dst_gap, "gap"), ("--dst-fold", flags.dst_fold, "fold")):
        if text is not None:
            m.set(values.dst(flag, text), "recurrence", "dstPolicy", member)
    policy = ("recurrence", "dstPolicy")
    if flags.given("dst_gap", "dst_fold") and m.get(*policy, "gap") is None and m.get(*policy, "fold") is None:
        m.set(None, *policy)  # an empty policy would still need a time zone


def _cron(m: _Members, flags: JobFlags) -> bool:
    """Whether the recurrence is a cron one once the flags apply: `--cron` drops frequency, interval and schedule;
    `--every`, `--at`, `--on` or `--cron ''` drop a cron (the API takes one kind of schedule or the other)."""
    calendar = flags.given("every", "at", "on")
    if flags.cron is not None and flags.cron.strip():
        if calendar:
            raise values.refuse(
                "--cron", flags.cron, f"a cron expression is the whole schedule: drop {', '.join(calendar)}"
            )
        m.set(flags.cron.strip(), "recurrence", "cron")
        for member in ("frequency", "interval", "schedule"):
            m.set(None, "recurrence", member)
        return True
    if flags.cron is not None or calendar:
        m.set(None, "recurrence", "cron")
        return False
    return m.get("recurrence", "cron") is not None


def _calendar(m: _Members, flags: JobFlags, recurring: list[str]) -> None:
    days = values.week_days(flags.on or []) or None
    if flags.every is not None:
        frequency, interval = values.every(flags.every)
        if days and frequency != "Week":
            raise values.refuse(
                "--on", ",".join(flags.on or []), f"week days need --every in weeks (1w, 2w), not {flags.every}"
            )
        m.set(frequency, "recurrence", "frequency")
        m.set(interval, "recurrence", "interval")
        for member, keep in (("weekDays", "Week"), ("monthDays", "Month"), ("monthlyOccurrences", "Month")):
            if frequency != keep and m.get("recurrence", "schedule", member) is not None:
                m.set(None, "recurrence", "schedule", member)
    hours, minutes = values.times(flags.at) if flags.at and any(a.strip() for a in flags.at) else (None, None)
    current = m.get("recurrence", "frequency")
    if current is None:
        implied = "Week" if days else "Day" if hours else "Hour" if minutes else None
        if implied is None:
            raise CliError(
                "IncompleteJob",
                f"{', '.join(recurring)}: a schedule needs --every (5m, 2h, 1d, 1w, 1mo), --at or --on",
                USAGE_ERROR,
            )
        m.set(implied, "recurrence", "frequency")
        m.set(1, "recurrence", "interval")
    elif days and str(current).lower() != "week":
        raise values.refuse(
            "--on",
            ",".join(flags.on or []),
            f"week days need a weekly schedule and the job's is {str(current).capitalize()}: add --every 1w",
        )
    if flags.at is not None:
        m.set(hours, "recurrence", "schedule", "hours")
        m.set(minutes, "recurrence", "schedule", "minutes")
    if flags.on is not None:
        m.set(days, "recurrence", "schedule", "weekDays")
