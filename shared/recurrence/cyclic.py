"""Slots that repeat with a fixed period (minute, hour, day and week recurrences)."""

from __future__ import annotations

from bisect import bisect_right

__all__ = ["CyclicPattern"]


class CyclicPattern:
    """Slots ``epoch + q * cycle + o`` for every integer ``q`` and every ``o`` in ``offsets``.

    Day and week recurrences are cyclic with ``cycle = interval`` periods and
    offsets taken from the first period. Minute and hour recurrences whose
    schedule filters by time of day are cyclic too, over ``lcm(interval,
    periods per day)`` periods, which is why they can be answered without
    walking period by period.
    """

    __slots__ = ("epoch", "cycle", "offsets", "_per_cycle")

    def __init__(self, epoch: int, cycle: int, offsets: tuple[int, ...]) -> None:
        if cycle <= 0 or any(not 0 <= o < cycle for o in offsets):
            raise ValueError("offsets must lie within one cycle")
        self.epoch = epoch
        self.cycle = cycle
        self.offsets = tuple(sorted(set(offsets)))
        self._per_cycle = len(self.offsets)

    def __repr__(self) -> str:
        return f"CyclicPattern(epoch={self.epoch}, cycle={self.cycle}, offsets={self.offsets[:8]}...)"

    def is_empty(self) -> bool:
        return not self._per_cycle

    def next_slot(self, u: int) -> int | None:
        offsets = self.offsets
        if not offsets:
            return None
        q, r = divmod(u - self.epoch, self.cycle)
        i = bisect_right(offsets, r)
        if i < self._per_cycle:
            return self.epoch + q * self.cycle + offsets[i]
        return self.epoch + (q + 1) * self.cycle + offsets[0]

    def prev_slot(self, u: int) -> int | None:
        offsets = self.offsets
        if not offsets:
            return None
        q, r = divmod(u - self.epoch, self.cycle)
        i = bisect_right(offsets, r) - 1
        if i >= 0:
            return self.epoch + q * self.cycle + offsets[i]
        return self.epoch + (q - 1) * self.cycle + offsets[-1]

    def rank(self, u: int) -> int:
        q, r = divmod(u - self.epoch, self.cycle)
        return q * self._per_cycle + bisect_right(self.offsets, r)

    def select(self, k: int) -> int:
        q, i = divmod(k - 1, self._per_cycle)
        return self.epoch + q * self.cycle + self.offsets[i]

    def min_gap(self) -> int | None:
        offsets = self.offsets
        if not offsets:
            return None
        wrap = self.cycle - offsets[-1] + offsets[0]
        return min([b - a for a, b in zip(offsets, offsets[1:], strict=False)] + [wrap])
