"""A job's exceptions (model/occurrence_control.py) laid over its nominal series. Pure.

The series a job runs is its recurrence's (the engine's, under its DST policy) with the instants its exceptions
take out (`Skip`, and the source of a `Move`) removed and the instants they put in (a `Move`'s `moveTo`, an
`Add`'s `occurrence`) added. Everything that walks a job's occurrences (planning, dispatch, catch-up, preview,
backfill, explain) walks that series through `JobSeries` (series.py), so an exception means the same everywhere.

- An instant put in is an occurrence of its own: it runs once, with its own identity (its instant), and counts
  outside the recurrence's `count` (`repeatCount` 0). `count` and `endTime` bound the nominal series only: an
  added run after them still runs.
- The ledger names what was taken out, when the dispatcher passes it (`excepted_between`): `Excepted` for a
  skip, `Moved` (naming the new instant) for a move; a run at an added instant is `Extra`, at a moved-to
  instant `Moved` (`reason_at`).
The checks a write makes (every instant taken out is an occurrence, no instant named twice, nothing put in where
an occurrence already runs) are lifecycle/occurrence_rules.py's: here every list is taken as valid.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..model import ExceptionType, LedgerReason, OccurrenceException

Step = Callable[[datetime], datetime | None]


@dataclass(frozen=True)
class Exceptions:
    """A job's exceptions, indexed: what they take out, what they put in (sorted), and each one by instant."""

    removed: frozenset[datetime]
    added: tuple[datetime, ...]
    by_instant: dict[datetime, OccurrenceException]

    def __bool__(self) -> bool:
        return bool(self.removed) or bool(self.added)

    def next_added(self, after: datetime, inclusive: bool = False) -> datetime | None:
        i = (bisect_left if inclusive else bisect_right)(self.added, after)
        return self.added[i] if i < len(self.added) else None

    def previous_added(self, before: datetime, inclusive: bool = False) -> datetime | None:
        i = (bisect_right if inclusive else bisect_left)(self.added, before)
        return self.added[i - 1] if i > 0 else None

    def skip_forward(self, instant: datetime | None, following: Step) -> datetime | None:
        """`instant`, or the first nominal occurrence after it that no exception takes out."""
        while instant is not None and instant in self.removed:
            instant = following(instant)
        return instant

    def skip_back(self, instant: datetime | None, previous: Step) -> datetime | None:
        while instant is not None and instant in self.removed:
            instant = previous(instant)
        return instant

    def reason_at(self, instant: datetime) -> tuple[LedgerReason, OccurrenceException] | None:
        """Why `instant` is (or is not) an occurrence because of an exception, and which one; None if none names it."""
        exception = self.by_instant.get(instant)
        if exception is None:
            return None
        if exception.type == ExceptionType.SKIP:
            return LedgerReason.EXCEPTED, exception
        if exception.type == ExceptionType.ADD:
            return LedgerReason.EXTRA, exception
        return LedgerReason.MOVED, exception

    def excepted_between(self, after: datetime | None, until: datetime) -> list[datetime]:
        """The instants taken out in (after, until], oldest first (what a dispatch step passes)."""
        return sorted(x for x in self.removed if (after is None or x > after) and x <= until)


NONE = Exceptions(frozenset(), (), {})


def index(exceptions: Sequence[OccurrenceException] | None) -> Exceptions:
    if not exceptions:
        return NONE
    removed: set[datetime] = set()
    added: set[datetime] = set()
    by_instant: dict[datetime, OccurrenceException] = {}
    for exception in exceptions:
        by_instant[exception.occurrence] = exception
        if exception.type == ExceptionType.ADD:
            added.add(exception.occurrence)
            continue
        removed.add(exception.occurrence)
        if exception.move_to is not None:
            added.add(exception.move_to)
            by_instant[exception.move_to] = exception
    return Exceptions(frozenset(removed), tuple(sorted(added - removed)), by_instant)


def earliest(*instants: datetime | None) -> datetime | None:
    present = [x for x in instants if x is not None]
    return min(present) if present else None


def latest(*instants: datetime | None) -> datetime | None:
    present = [x for x in instants if x is not None]
    return max(present) if present else None
