"""What each executor process holds unrun: one row per process, for health to read the executor's true lag.

Why: under a backlog each host receives up to host.json's batchSize + newBatchThreshold messages and runs a few at
a time (executor/late_line.py); the rest wait in the process, invisible in the queue, and they are the oldest. The
queue's front visible message then tells a lateness tens of seconds short of what occurrences meet (an overload run
of bench/overload.py: health said 21 s while occurrences ran 40-77 s late). So each process says what it holds.

Contract:
- One partition (`executor-held`) of the primary account's State table, one row per process (`host`: a name the
  process picks once), written by executor/held_report.py: `At` (when written), `OldestDue` (the earliest due of
  the batches it holds waiting), `Batches` (how many). A process that holds none deletes its row.
- `earliest(now, fresh, forget)`: the earliest `OldestDue` of the rows written within `fresh` of `now`, and the
  batches they hold (None, 0 when none): a row older than that is a process gone, or one too busy to say, and
  health falls back on the queue's front. With `forget` (the dispatcher's tick, shared/health.py `record_tick`)
  the same read deletes those older rows (a process that went away holding batches leaves its row), each only if
  unchanged since read.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta

from .tables import ConcurrencyError, Entity, Table, as_datetime, as_int

_PARTITION = "executor-held"


class HeldReports:
    def __init__(self, state: Table) -> None:
        self.table = state

    def report(self, host: str, at: datetime, oldest_due: datetime, batches: int) -> None:
        self.table.upsert(
            {"PartitionKey": _PARTITION, "RowKey": host, "At": at, "OldestDue": oldest_due, "Batches": batches}
        )

    def clear(self, host: str) -> None:
        self.table.delete(_PARTITION, host)

    def earliest(self, now: datetime, fresh: timedelta, forget: bool = False) -> tuple[datetime | None, int]:
        oldest: datetime | None = None
        batches = 0
        for row in self._rows():
            at, due = as_datetime(row.get("At")), as_datetime(row.get("OldestDue"))
            if at is None or now - at > fresh:
                if forget:
                    with contextlib.suppress(ConcurrencyError):  # written again since: the process is back
                        self.table.delete(_PARTITION, row["RowKey"], row.get("etag"))
                continue
            if due is not None:
                oldest = due if oldest is None else min(oldest, due)
                batches += as_int(row.get("Batches")) or 0
        return oldest, batches

    def _rows(self) -> list[Entity]:
        return list(self.table.query("PartitionKey eq @p", {"p": _PARTITION}, page_size=1000))
