"""The contract shared by the slot generators (:mod:`.cyclic`, :mod:`.monthly`).

A pattern is an infinite, strictly increasing set of integer "slots" on a
seconds axis (wall-clock seconds since 1970-01-01T00:00 for calendar-based
recurrences, Unix seconds for elapsed-time ones). It knows nothing of
startTime, count, endTime or time zones; :class:`OccurrenceSeries` adds those.
Every method must answer in time independent of how far ``u`` is from the
pattern's epoch.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Pattern"]


class Pattern(Protocol):
    epoch: int
    """Start of period 0 (the period containing startTime); slots are counted from here."""

    def next_slot(self, u: int) -> int | None:
        """Smallest slot strictly greater than ``u`` (None if the pattern is empty)."""
        ...

    def prev_slot(self, u: int) -> int | None:
        """Largest slot less than or equal to ``u`` (None if the pattern is empty)."""
        ...

    def rank(self, u: int) -> int:
        """Number of slots in ``[epoch, u]``; for ``u < epoch``, minus the number in ``(u, epoch)``."""
        ...

    def select(self, k: int) -> int:
        """The slot ``s`` with ``rank(s) == k`` (inverse of :meth:`rank`)."""
        ...

    def min_gap(self) -> int | None:
        """Smallest distance between consecutive slots, None if there are none."""
        ...

    def is_empty(self) -> bool:
        """True when the pattern has no slot at all."""
        ...
