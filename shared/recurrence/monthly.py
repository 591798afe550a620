"""Slots on selected days of every n-th month (month and year recurrences)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate
from math import gcd

from .calendar_math import CYCLE_MONTHS, DAY, DaySpec, civil, month_first_day, month_type

__all__ = ["MonthlyPattern"]

# Months to step through before falling back to the cumulative table; any
# ordinary schedule (5th Friday, the 31st) finds a matching month well within it.
_SCAN = 12
_TYPES = tuple((length, wd) for length in (28, 29, 30, 31) for wd in range(7))


def _by_type(spec: DaySpec) -> dict[tuple[int, int], tuple[int, ...]]:
    return {t: spec.days(*t) for t in _TYPES}


@lru_cache(maxsize=512)
def _prefix_table(m0: int, n: int, spec: DaySpec) -> tuple[int, ...]:
    """Cumulative selected-day counts over the active months of one 400-year cycle.

    Entry ``a`` is the number of selected days in active months ``0..a-1``
    (active month ``a`` is ``m0 + a * n``). The active months repeat their
    calendar every ``CYCLE_MONTHS / gcd(n, CYCLE_MONTHS)`` steps, so this
    table answers counts for any span in O(1).
    """
    per_type = {t: len(days) for t, days in _by_type(spec).items()}
    period = CYCLE_MONTHS // gcd(n, CYCLE_MONTHS)
    return (0, *accumulate(per_type[month_type(m0 + a * n)] for a in range(period)))


@lru_cache(maxsize=512)
def _min_day_gap(m0: int, n: int, spec: DaySpec) -> int | None:
    """Fewest days between two consecutive selected days (scans one 400-year cycle)."""
    by_type = _by_type(spec)
    period = CYCLE_MONTHS // gcd(n, CYCLE_MONTHS)
    best: int | None = None
    previous: int | None = None
    for a in range(period + 1):  # one extra month closes the cycle
        mi = m0 + a * n
        first = month_first_day(mi) - 1
        for d in by_type[month_type(mi)]:
            if previous is not None and (best is None or first + d - previous < best):
                best = first + d - previous
            previous = first + d
    return best


class MonthlyPattern:
    """Slots at ``times`` (seconds of day) on the days ``spec`` selects, in
    months ``m0 + k * n`` (month indices, ``year * 12 + month - 1``).

    A year recurrence is this pattern with ``n = 12 * interval`` and the
    startTime's day of month, which is how a 29 February start skips
    non-leap years. Counting uses a per-type constant when every kind of
    month has the same number of selected days, otherwise a cumulative
    table over the 400-year Gregorian cycle.
    """

    __slots__ = ("epoch", "m0", "n", "spec", "times", "_days_by_type", "_constant")

    def __init__(self, m0: int, n: int, spec: DaySpec, times: tuple[int, ...]) -> None:
        if n <= 0 or not times or any(not 0 <= t < DAY for t in times):
            raise ValueError("need a positive interval and times within a day")
        self.epoch = month_first_day(m0) * DAY
        self.m0 = m0
        self.n = n
        self.spec = spec
        self.times = tuple(sorted(set(times)))
        self._days_by_type = _by_type(spec)
        counts = {len(days) for days in self._days_by_type.values()}
        self._constant = counts.pop() if len(counts) == 1 else None

    def __repr__(self) -> str:
        return f"MonthlyPattern(m0={self.m0}, n={self.n}, spec={self.spec}, times={self.times})"

    def _days(self, mi: int) -> tuple[int, ...]:
        return self._days_by_type[month_type(mi)]

    def _prefix(self) -> tuple[int, ...]:
        return _prefix_table(self.m0 % CYCLE_MONTHS, self.n, self.spec)

    def _days_before(self, a: int) -> int:
        """Selected days in active months ``0..a-1`` (negative for ``a < 0``)."""
        if self._constant is not None:
            return a * self._constant
        prefix = self._prefix()
        q, r = divmod(a, len(prefix) - 1)
        return q * prefix[-1] + prefix[r]

    def is_empty(self) -> bool:
        if self._constant is not None:
            return self._constant == 0
        return self._prefix()[-1] == 0

    def next_slot(self, u: int) -> int | None:
        if self.is_empty():
            return None
        day, tod = divmod(u, DAY)
        y, m, d = civil(day)
        mi = y * 12 + m - 1
        rem = (mi - self.m0) % self.n
        times = self.times
        if rem == 0:
            days = self._days(mi)
            i = bisect_left(days, d)
            if i < len(days) and days[i] == d:
                k = bisect_right(times, tod)
                if k < len(times):
                    return u - tod + times[k]
                i += 1
            if i < len(days):
                return (day - d + days[i]) * DAY + times[0]
            mi += self.n
        else:
            mi += self.n - rem
        for _ in range(_SCAN):
            days = self._days(mi)
            if days:
                return (month_first_day(mi) + days[0] - 1) * DAY + times[0]
            mi += self.n
        return self.select(self.rank(u) + 1)

    def prev_slot(self, u: int) -> int | None:
        if self.is_empty():
            return None
        day, tod = divmod(u, DAY)
        y, m, d = civil(day)
        mi = y * 12 + m - 1
        rem = (mi - self.m0) % self.n
        times = self.times
        if rem == 0:
            days = self._days(mi)
            i = bisect_right(days, d) - 1
            if i >= 0 and days[i] == d:
                k = bisect_right(times, tod) - 1
                if k >= 0:
                    return u - tod + times[k]
                i -= 1
            if i >= 0:
                return (day - d + days[i]) * DAY + times[-1]
            mi -= self.n
        else:
            mi -= rem
        for _ in range(_SCAN):
            days = self._days(mi)
            if days:
                return (month_first_day(mi) + days[-1] - 1) * DAY + times[-1]
            mi -= self.n
        return self.select(self.rank(u))

    def rank(self, u: int) -> int:
        day, tod = divmod(u, DAY)
        y, m, d = civil(day)
        j = y * 12 + m - 1 - self.m0
        per_day = len(self.times)
        total = self._days_before(-(-j // self.n)) * per_day
        if j % self.n == 0:
            days = self._days(self.m0 + j)
            i = bisect_left(days, d)
            total += i * per_day
            if i < len(days) and days[i] == d:
                total += bisect_right(self.times, tod)
        return total

    def select(self, k: int) -> int:
        q, r = divmod(k - 1, len(self.times))
        if self._constant is not None:
            a, di = divmod(q, self._constant)
        else:
            prefix = self._prefix()
            cycles, rest = divmod(q, prefix[-1])
            i = bisect_right(prefix, rest) - 1
            a, di = cycles * (len(prefix) - 1) + i, rest - prefix[i]
        mi = self.m0 + a * self.n
        return (month_first_day(mi) + self._days(mi)[di] - 1) * DAY + self.times[r]

    def min_gap(self) -> int | None:
        if self.is_empty():
            return None
        times = self.times
        within = [b - a for a, b in zip(times, times[1:], strict=False)]
        day_gap = _min_day_gap(self.m0 % CYCLE_MONTHS, self.n, self.spec)
        across = day_gap * DAY + times[0] - times[-1] if day_gap is not None else None
        return min(within + ([across] if across is not None else []))
