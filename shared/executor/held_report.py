"""The process's held report: what late batches it holds waiting, written every `held_report_every` for health.

Contract:
- `HeldReport(store, clock, threads, held)`: `held()` answers the earliest due of the batches the process holds
  waiting and their count (executor/late_line.py `LateLine.held`), from any thread.
- `start()` (the line calls it whenever a batch starts to wait; idempotent) starts a loop on the process's threads
  (`Threads.loop`, ended by their close): every `held_report_every` it writes the process's row (store/held.py)
  while a batch waits, and deletes it once, when none waits any more. A process whose late batches never wait
  starts no loop and writes nothing.
- `report()`: one pass of the loop, for tools and tests that hold no loop.
- A write that fails is logged by the loop and tried again at the next period: the report is a hint for health,
  never a step of an occurrence's way.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import datetime

from ..clock import Clock
from ..store import Store
from ..store.held import HeldReports
from ..threads import Threads


class HeldReport:
    def __init__(
        self, store: Store, clock: Clock, threads: Threads, held: Callable[[], tuple[datetime | None, int]]
    ) -> None:
        self.host = uuid.uuid4().hex  # this process's row
        self._rows = HeldReports(store.due.state)
        self._clock = clock
        self._threads = threads
        self._held = held
        self._every = store.timings.held_report_every.total_seconds()
        self._lock = threading.Lock()
        self._started = False
        self._said = False  # the row is there (written, not yet deleted)

    def start(self) -> None:
        with self._lock:
            if not self._started:
                self._threads.loop("held-report", self.report, self._every)
                self._started = True

    def report(self) -> None:
        oldest, batches = self._held()
        if oldest is not None:
            self._rows.report(self.host, self._clock.now(), oldest, batches)
            self._said = True
        elif self._said:
            self._rows.clear(self.host)
            self._said = False
