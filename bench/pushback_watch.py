"""What bench/pushback.py reads beside the app, straight from its Azurite (not through the storage meter, so none
of it is counted in the app's storage requests): a few jobs' ledger entries while they wait (reason Deferred),
a destination's row (its circuit), every job's history and ledger once a phase is over (retries used, failed
attempts, waitedFor), a collection's dead letters. Plus the figures computed from the targets' log.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from shared.jobstate.pushback import DestinationState
from shared.keys import CollectionKey, JobKey
from shared.model import JobExecutionStatus, LedgerReason, WaitCause
from shared.settings import Settings
from shared.store import Store
from shared.store.dead_letters import DeadLetters

SUB, RG = "bench", "rg"  # bench/harness.py's GROUP


@dataclass
class Spent:
    """Once a phase is over: what its jobs' history and ledger say."""

    retried: int = 0  # attempts with retryCount > 0
    failed: int = 0  # attempts that failed
    completed: int = 0  # ledger entries Completed
    waited_for_destination: int = 0  # ledger entries with waitedFor Destination
    waiting: int = 0  # ledger entries still Waiting (deferred)
    most_retries: int = 0  # the highest retryCount of any attempt


@dataclass
class Deferred:
    """Ledger entries with reason Deferred seen while a phase ran (sampled)."""

    jobs: set[str] = field(default_factory=set)
    entries: set[tuple[str, str]] = field(default_factory=set)  # (job, message)
    reads: int = 0


class Reader:
    def __init__(self, connection_string: str) -> None:
        env = {**os.environ, "AzureWebJobsStorage": connection_string}
        self.store = Store.from_settings(Settings.from_environment(env))

    def sample_deferred(self, collection: str, jobs: Iterable[str], seen: Deferred) -> None:
        for job in jobs:
            entries, _ = self.store.history.ledger_page(JobKey(SUB, RG, collection, job), None, None, None, 3)
            seen.reads += 1
            for entry in entries:
                if entry.reason == LedgerReason.DEFERRED:
                    seen.jobs.add(job)
                    seen.entries.add((job, entry.message))

    def state(self, destination: str) -> DestinationState:
        rows = self.store.destinations
        assert rows is not None
        return rows.read(destination).state

    def spent(self, collection: str, jobs: Iterable[str]) -> Spent:
        def one(job: str) -> Spent:
            key = JobKey(SUB, RG, collection, job)
            history, _ = self.store.history.page(key, None, 100)
            ledger, _ = self.store.history.ledger_page(key, None, None, None, 5)
            return Spent(
                retried=sum(1 for h in history if h.retry_count > 0),
                failed=sum(1 for h in history if h.status == JobExecutionStatus.FAILED),
                completed=sum(1 for e in ledger if e.status == JobExecutionStatus.COMPLETED),
                waited_for_destination=sum(1 for e in ledger if e.waited_for == WaitCause.DESTINATION),
                waiting=sum(1 for e in ledger if e.status == JobExecutionStatus.WAITING),
                most_retries=max((h.retry_count for h in history), default=0),
            )

        total = Spent()
        with ThreadPoolExecutor(8) as pool:
            for part in pool.map(one, jobs):
                total.retried += part.retried
                total.failed += part.failed
                total.completed += part.completed
                total.waited_for_destination += part.waited_for_destination
                total.waiting += part.waiting
                total.most_retries = max(total.most_retries, part.most_retries)
        return total

    def dead_letters(self, collection: str) -> int:
        key = CollectionKey(SUB, RG, collection)
        letters = DeadLetters(self.store.history.table_for(key))
        count, token = 0, None
        while True:
            page, token = letters.page(key, 1000, token)
            count += len(page)
            if not token:
                return count


def densest(instants: list[float], span: float) -> tuple[int, float]:
    """The most instants in any window [t, t + span) (sliding, starting at each instant), and that window's t."""
    ordered = sorted(instants)
    most, start, first = 0, float("nan"), 0
    for last, instant in enumerate(ordered):
        while instant - ordered[first] >= span:
            first += 1
        if last - first + 1 > most:
            most, start = last - first + 1, ordered[first]
    return most, start


def most_within(instants: list[float], span: float) -> int:
    return densest(instants, span)[0]


def opened_at(failures: list[float], probe_every: float) -> float | None:
    """From the target's log: the last failure before the requests fell to probes (every later gap at least 80 %
    of `probe_every`); None when they never did."""
    if not failures:
        return None
    ordered = sorted(failures)
    index = len(ordered) - 1
    while index > 0 and ordered[index] - ordered[index - 1] >= 0.8 * probe_every:
        index -= 1
    return ordered[index] if index < len(ordered) - 1 else None
