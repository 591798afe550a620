"""The one hand-moved clock of the tests and benchmarks (the Clock protocol is injectable by design)."""

from __future__ import annotations

from datetime import datetime, timedelta


class ManualClock:
    """A clock the caller moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.current = now

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta
