"""What a dispatch did: the outcome of each due entry it took, counted per tick or task (and what its heartbeat
saw), for the tick's log line, telemetry and tests."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from . import health


class DispatchOutcome(str, Enum):
    """What became of one due entry in a dispatch."""

    QUEUED = "queued"  # its occurrence is queued and the job advanced past it
    SKIPPED = "skipped"  # the job is not Enabled: advanced past it, nothing queued
    STALE = "stale"  # the entry no longer matches its job (moved on, redefined, deleted): dropped
    # Another write to the job won the ETag race to advance it (a PUT, PATCH, state change or delete
    # re-planned it, or writes kept winning ADVANCE_ATTEMPTS times), or a write that added the entry has not
    # written its job yet (jobstate.awaits_its_write): the entry stays for a later tick.
    RACED = "raced"
    FAILED = "failed"  # a storage fault: the entry stays, a later tick dispatches it again


@dataclass
class TickReport:
    buckets: int = 0
    tasks: int = 0
    enqueued: int = 0  # DispatchOutcome.QUEUED
    skipped: int = 0
    stale: int = 0
    raced: int = 0
    failed: int = 0
    observation: health.TickObservation | None = None  # what the tick's heartbeat saw (None: not written)

    def count(self, outcome: DispatchOutcome, n: int = 1) -> None:
        field_name = "enqueued" if outcome == DispatchOutcome.QUEUED else outcome.value
        setattr(self, field_name, getattr(self, field_name) + n)

    def add(self, other: TickReport) -> None:
        for outcome in DispatchOutcome:
            self.count(outcome, other.of(outcome))

    def of(self, outcome: DispatchOutcome) -> int:
        return int(getattr(self, "enqueued" if outcome == DispatchOutcome.QUEUED else outcome.value))
