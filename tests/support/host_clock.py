"""The clock of a local host started with an offset, for process-level tests that need the host's minute tick.

`python -m devhost` reads SCHEDULER_CLOCK_OFFSET_SECONDS (shared/settings/clock_offset.py): its timers and the
app's clock run at real time + that offset. `HostClock.reading(second, within)` picks the offset at which the host's
clock reads `second` of a minute `within` seconds from now, so a host started with `clock.setting()` in its
environment ticks a few seconds after the test is ready, instead of at the real minute (up to 60 s later). The test
then reckons every instant the host sees on this clock: start times, "the next minute", an arrival's time on the
host (`host_time`). Hosts sharing storage share one HostClock (their leases and due minutes are compared). On the
session's Azurite, give such a host a host id of its own (AzureFunctionsWebHost__hostid): the timers' schedule
status is kept per host id, and another clock's status would make it fire a tick past due at start.

Only the phase moves: the host still ticks once a minute, so a wait on a tick still lasts past it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from shared.clock import OffsetClock
from shared.settings.clock_offset import CLOCK_OFFSET_SETTING


class HostClock(OffsetClock):
    @classmethod
    def reading(cls, second: float, within: float = 0.0) -> HostClock:
        """The clock that reads `second` (0 to 60) of a minute `within` seconds from now; ahead of real time by
        less than a minute. Whole milliseconds, as the setting carries them."""
        then = datetime.now(UTC) + timedelta(seconds=within)
        ahead = (second - then.second - then.microsecond / 1e6) % 60
        return cls(timedelta(milliseconds=round(ahead * 1000)))

    def setting(self) -> dict[str, str]:
        """The host's environment entry for this clock."""
        return {CLOCK_OFFSET_SETTING: f"{self.offset.total_seconds():.3f}"}

    def host_time(self, real: datetime) -> datetime:
        """What the host's clock read at the real instant `real`."""
        return real + self.offset

    def next_minute(self, room: float = 0.0) -> datetime:
        """The host's next minute tick at least `room` seconds away."""
        return (self.now() + timedelta(seconds=room + 60)).replace(second=0, microsecond=0)

    def sleep_until(self, instant: datetime) -> None:
        """Until the host's clock reads `instant` (at once if it has)."""
        time.sleep(max((instant - self.now()).total_seconds(), 0.0))
