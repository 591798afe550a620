"""Five-field cron expressions (Vixie cron syntax) as a wall-clock slot :class:`~.pattern.Pattern`.

Syntax: ``minute hour day-of-month month day-of-week``, separated by whitespace. Ranges are minute 0-59,
hour 0-23, day of month 1-31, month 1-12 or ``JAN``-``DEC``, day of week 0-7 or ``SUN``-``SAT`` (0 and 7 are
both Sunday); names are three letters, case-insensitive. Each field is a comma-separated list of ``*``,
``a``, ``a-b``, ``*/n``, ``a-b/n`` or ``a/n`` (``a`` to the field's maximum, 7 for the day of week), where a
step ``n`` runs from 1 to the field's maximum. The macros ``@yearly``/``@annually`` (``0 0 1 1 *``),
``@monthly`` (``0 0 1 * *``), ``@weekly`` (``0 0 * * 0``), ``@daily``/``@midnight`` (``0 0 * * *``) and
``@hourly`` (``0 * * * *``) stand alone (case-insensitive). Anything else is refused: six fields, Quartz's
``L``, ``W``, ``#`` and ``?``, ``@reboot``, a value out of range, a zero or oversized step, a reversed range
(``FRI-MON``), and an expression that never fires (``0 0 30 2 *``).

Days follow Vixie cron: when both day fields are restricted (neither starts with ``*``) a day runs if
EITHER matches (``0 12 1 * MON``: the 1st and every Monday); otherwise it must match both.

Slots lie at second 0 of every matching minute on the wall-clock axis of :mod:`.calendar_math` (the series
maps them to instants with the time zone's DST rules: a slot in a spring-forward gap runs at the first
instant after it, a repeated wall time once, at its first instance). Since the Gregorian calendar repeats
every 400 years (4800 months, 146097 days, whole weeks), a compiled expression keeps, per month of one
cycle, the tuple of matching days (shared between months of one kind) and a cumulative count, plus the
sorted times of day: every query is two bisections and a date conversion whatever its distance, and a
compiled expression takes under 200 kB even for ``* * * * *`` (no day x minute product is materialised).
Compiled expressions are cached (``functools.lru_cache``). ``epoch`` is 2000-01-01T00:00, a cycle start:
``rank`` counts from there, independently of any startTime. ``min_gap`` is the nominal wall-clock one.

Errors are :class:`RecurrenceError` with path ``"cron"`` and a message naming the field, such as
``the day-of-month field: 32 is out of range 1-31``.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from .calendar_math import CYCLE_DAYS, CYCLE_MONTHS, DAY, civil, month_first_day, month_type
from .errors import RecurrenceError

__all__ = ["CronExpression", "CronPattern", "cron_pattern", "parse_cron"]

_MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_QUARTZ = re.compile(r"\d*L|\d+W|LW|L-\d+|.*[#?].*", re.IGNORECASE)
_MAX_LENGTH = 1000  # far beyond any sensible expression; bounds the work spent on garbage


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    name_base: int = 0  # value of names[0]

    def value(self, token: str) -> int:
        if token.isascii() and token.isdigit():
            if len(token.lstrip("0")) > 4 or not self.low <= int(token) <= self.high:
                raise self.error(f"{token} is out of range {self.low}-{self.high}")
            return int(token)
        if token.upper() in self.names:
            return self.names.index(token.upper()) + self.name_base
        if _QUARTZ.fullmatch(token):
            raise self.error(f"{token!r}: the Quartz extensions L, W, # and ? are not supported")
        kind = f"a number or a {self.name} name" if self.names else "a number"
        raise self.error(f"{token!r} is not {kind}")

    def error(self, message: str) -> RecurrenceError:
        return RecurrenceError("cron", f"the {self.name} field: {message}")


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, _MONTH_NAMES, 1),
    _Field("day-of-week", 0, 7, _DAY_NAMES, 0),
)


def _parse_field(text: str, field: _Field) -> tuple[int, ...]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise field.error(f"{text!r} has an empty list item")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not (step_text.isascii() and step_text.isdigit()):
                raise field.error(f"step {step_text!r} in {item!r} is not a number")
            step = int(step_text) if len(step_text.lstrip("0")) <= 4 else field.high + 1
            if not 1 <= step <= field.high:
                raise field.error(f"step {step_text} in {item!r} is out of range 1-{field.high}")
        if base == "*":
            low, high = field.low, field.high
        elif "-" in base:
            first, _, last = base.partition("-")
            low, high = field.value(first), field.value(last)
            if low > high:
                raise field.error(f"the range {base!r} is reversed")
        else:
            low = field.value(base)
            high = field.high if slash else low
        values.update(range(low, high + 1, step))
    return tuple(sorted(values))


@dataclass(frozen=True)
class CronExpression:
    """A parsed expression: the sorted values each field allows.

    ``days_of_week`` counts 0 = Sunday ... 6 = Saturday (a 7 is folded into 0). ``days_either`` is Vixie's
    rule: True when both day fields are restricted, so that a day matching either of them runs.
    """

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]
    days_either: bool

    def day_matches(self, month: int, day: int, day_of_week: int) -> bool:
        """Whether the date runs (``day_of_week`` 0 = Sunday), by Vixie's rule."""
        if month not in self.months:
            return False
        by_month_day, by_week_day = day in self.days_of_month, day_of_week in self.days_of_week
        return (by_month_day or by_week_day) if self.days_either else (by_month_day and by_week_day)


def _parse(expression: object) -> CronExpression:
    """The syntax alone: whether the expression ever fires is the compiled pattern's check."""
    if not isinstance(expression, str):
        raise RecurrenceError("cron", "a cron expression must be a string")
    if len(expression) > _MAX_LENGTH:
        raise RecurrenceError("cron", f"a cron expression must be at most {_MAX_LENGTH} characters")
    tokens = expression.split()
    if len(tokens) == 1 and tokens[0].startswith("@"):
        macro = _MACROS.get(tokens[0].lower())
        if macro is None:
            raise RecurrenceError("cron", f"unknown macro {tokens[0]!r}; use one of {', '.join(_MACROS)}")
        tokens = macro.split()
    if len(tokens) != len(_FIELDS):
        raise RecurrenceError(
            "cron",
            f"a cron expression has five fields (minute hour day-of-month month day-of-week), not {len(tokens)}",
        )
    minutes, hours, days, months, weekdays = (_parse_field(t, f) for t, f in zip(tokens, _FIELDS, strict=True))
    return CronExpression(
        minutes,
        hours,
        days,
        months,
        tuple(sorted({d % 7 for d in weekdays})),
        days_either=not tokens[2].startswith("*") and not tokens[4].startswith("*"),
    )


_EPOCH_MONTH = 2000 * 12  # a month index that starts a 400-year cycle
_EPOCH_DAY = month_first_day(_EPOCH_MONTH)


class CronPattern:
    """The slots of a :class:`CronExpression` (see the module docstring); build with :func:`cron_pattern`."""

    __slots__ = ("expression", "epoch", "times", "_by_month", "_prefix", "_per_cycle", "_min_gap")

    def __init__(self, expression: CronExpression) -> None:
        self.expression = expression
        self.epoch = _EPOCH_DAY * DAY
        self.times = tuple(sorted(h * 3600 + m * 60 for h in expression.hours for m in expression.minutes))
        kinds: dict[tuple[int, int, int], tuple[int, ...]] = {}
        by_month = []
        for k in range(CYCLE_MONTHS):
            length, first_weekday = month_type(_EPOCH_MONTH + k)  # first_weekday: Monday = 0
            kind = (k % 12 + 1, length, first_weekday)
            if kind not in kinds:
                kinds[kind] = tuple(
                    d for d in range(1, length + 1) if expression.day_matches(kind[0], d, (first_weekday + d) % 7)
                )
            by_month.append(kinds[kind])
        self._by_month = tuple(by_month)
        self._prefix = array("i", (0, *accumulate(len(days) for days in by_month)))  # matching days before month k
        self._per_cycle = self._prefix[-1]
        self._min_gap: int | None = None
        if not self._per_cycle:
            raise RecurrenceError(
                "cron", "the expression never fires: no date matches its day-of-month, month and day-of-week"
            )

    def __repr__(self) -> str:
        return f"CronPattern({self.expression})"

    def is_empty(self) -> bool:
        return not self._per_cycle

    def _day_rank(self, day: int) -> tuple[int, bool]:
        """(matching days in [epoch day, day), or minus those in [day, epoch day); whether ``day`` matches)."""
        year, month, day_of_month = civil(day)
        q, k = divmod(year * 12 + month - 1 - _EPOCH_MONTH, CYCLE_MONTHS)
        days = self._by_month[k]
        i = bisect_left(days, day_of_month)
        return q * self._per_cycle + self._prefix[k] + i, i < len(days) and days[i] == day_of_month

    def _select_day(self, j: int) -> int:
        """The day number of matching day ``j`` (0 is the first at or after the epoch)."""
        q, r = divmod(j, self._per_cycle)
        k = bisect_right(self._prefix, r) - 1
        return month_first_day(_EPOCH_MONTH + q * CYCLE_MONTHS + k) + self._by_month[k][r - self._prefix[k]] - 1

    def rank(self, u: int) -> int:
        day, tod = divmod(u, DAY)
        before, matches = self._day_rank(day)
        return before * len(self.times) + (bisect_right(self.times, tod) if matches else 0)

    def select(self, k: int) -> int:
        j, i = divmod(k - 1, len(self.times))
        return self._select_day(j) * DAY + self.times[i]

    def next_slot(self, u: int) -> int | None:
        return self.select(self.rank(u) + 1)

    def prev_slot(self, u: int) -> int | None:
        return self.select(self.rank(u))

    def min_gap(self) -> int | None:
        if self._min_gap is None:
            times = self.times
            within = [b - a for a, b in zip(times, times[1:], strict=False)]
            self._min_gap = min([*within, self._min_day_gap() * DAY + times[0] - times[-1]])
        return self._min_gap

    def _min_day_gap(self) -> int:
        """Fewest days between consecutive matching days (one pass over a cycle, stopping at 1)."""
        best = CYCLE_DAYS
        previous: int | None = None
        for k, days in enumerate(self._by_month):
            first = month_first_day(_EPOCH_MONTH + k) - 1
            for d in days:
                if previous is not None and first + d - previous < best:
                    best = first + d - previous
                    if best == 1:
                        return 1
                previous = first + d
        wrap = self._select_day(self._per_cycle) - self._select_day(self._per_cycle - 1)
        return min(best, wrap)


@lru_cache(maxsize=128)
def _compiled(expression: CronExpression) -> CronPattern:
    return CronPattern(expression)


def parse_cron(expression: object) -> CronExpression:
    """Parse a five-field expression or macro; :class:`RecurrenceError` (path ``cron``) unless it is a
    valid one that fires at least once."""
    parsed = _parse(expression)
    _compiled(parsed)
    return parsed


def cron_pattern(expression: str) -> CronPattern:
    """The compiled pattern of ``expression`` (cached per distinct expression); raises
    :class:`RecurrenceError` as :func:`parse_cron` does."""
    return _compiled(_parse(expression))
