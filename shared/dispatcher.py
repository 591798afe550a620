"""The dispatcher: once a minute, turn due-index entries into queued occurrences.

A tick reads the minute buckets from its watermark up to its horizon, one whole minute ahead of the
current one, and for each entry: enqueue the occurrence (visible at its due second), then advance
the job to its following occurrence. Working a minute ahead means a tick's own duration (seconds,
with thousands of due jobs) never makes an occurrence late. Enqueue comes first so a crash
duplicates rather than loses; the executor's claim drops the duplicate. A writer (the API) calls
`dispatch` directly for an occurrence before the horizon, so a job created seconds ahead runs on
time although nothing polls faster than the minute timer.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from .clock import Clock
from .model import JobExecutionStatus, JobHistoryActionName, JobState
from .occurrence import OccurrenceMessage, Trigger
from .planning import following_occurrence, latest_missed, repeat_count
from .records import HistoryRecord, JobRecord
from .store import ConcurrencyError, DueEntry, Store, bucket_of, bucket_start

log = logging.getLogger(__name__)

TICK = timedelta(minutes=1)
# Buckets re-read behind the watermark: an API write racing a tick may land in a bucket just processed.
OVERLAP = timedelta(minutes=2)
# An occurrence later than this is "missed" (the service was down), not merely late.
MISSED_AFTER = timedelta(minutes=2)
# Buckets read by one tick at most, so recovery from a long outage spreads over several ticks.
MAX_BUCKETS_PER_TICK = 720
PARALLELISM = 16


@dataclass
class TickReport:
    buckets: int = 0
    enqueued: int = 0
    stale: int = 0
    failed: int = 0


def dispatch_horizon(now: datetime) -> datetime:
    """Occurrences before this instant are queued already, or must be queued by whoever plans them now:
    the tick running now covers them, and the next tick starts after it."""
    return bucket_start(bucket_of(now)) + 2 * TICK


class Dispatcher:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def tick(self) -> TickReport:
        """Enqueue every occurrence due before the dispatch horizon; advance the watermark."""
        now = self.clock.now()
        report = TickReport()
        last = dispatch_horizon(now) - TICK  # the last bucket before the horizon
        watermark = self.store.due.watermark() or last - TICK
        current = max(watermark - OVERLAP, last - MAX_BUCKETS_PER_TICK * TICK)
        # Entries name distinct jobs, and each costs a few storage round trips: run them side by side.
        with ThreadPoolExecutor(max_workers=PARALLELISM) as pool:
            while current <= last and report.buckets < MAX_BUCKETS_PER_TICK:
                entries = self.store.due.entries(bucket_of(current))
                for outcome in pool.map(lambda entry: self._dispatch_entry(entry, now), entries):
                    report.enqueued += outcome == "enqueued"
                    report.stale += outcome == "stale"
                    report.failed += outcome == "failed"
                if current > watermark:
                    self.store.due.set_watermark(current)
                current += TICK
                report.buckets += 1
        return report

    def _dispatch_entry(self, entry: DueEntry, now: datetime) -> str:
        # One bad entry must not stop the tick for every other job; the entry stays, so the ticks that
        # re-read this bucket (OVERLAP) try it again.
        try:
            return self._dispatch_checked(entry, now)
        except Exception:
            log.exception("dispatching %s at %s failed; it is retried by the next ticks", entry.job.resource_id,
                          entry.due.isoformat())
            return "failed"

    def _dispatch_checked(self, entry: DueEntry, now: datetime) -> str:
        job = self.store.jobs.get(entry.job)
        # An entry is the job's own when the job is due at its instant (its row is keyed by job and instant),
        # whatever generation wrote it: a dispatch that lost a race to a rewrite may have re-added it.
        if job is None or job.next_execution_time != entry.due:
            self.store.due.remove(entry.job, entry.due)  # the job moved on, changed, or is gone
            return "stale"
        return "enqueued" if self.dispatch(job, entry.due, now) else "raced"

    def dispatch(self, job: JobRecord, due: datetime, now: datetime) -> bool:
        """Enqueue the job's occurrence at `due`, then advance it to the next one. False if it lost a race."""
        occurrence = due
        if job.state == JobState.ENABLED and now - due > MISSED_AFTER:
            occurrence = latest_missed(job, now) or due
            if occurrence > due:
                self._record_postponed(job, due, occurrence, now)
        if job.state == JobState.ENABLED:
            message = OccurrenceMessage(job.key, occurrence, occurrence, Trigger.SCHEDULE, generation=job.generation)
            # The queue counts visibility from the send, and a busy tick sends seconds after it started:
            # the delay must be measured from now, not from the tick's start.
            self.store.queue.send(message, self.clock.now())
        following = following_occurrence(job, occurrence)
        generation = job.generation
        # The index entry goes first (as in the API's planning): a failure after it leaves a stale entry,
        # which a tick drops, whereas a job advanced to an occurrence without its entry would never run.
        if following is not None:
            self.store.due.add(job.key, following, generation)
        while True:
            job.next_execution_time = following
            job.dispatched_occurrence = occurrence
            try:
                self.store.jobs.replace(job)
                break
            except ConcurrencyError:
                # The executor updates counters on the same entity: re-read, and advance only if the
                # job is still the one we planned for (a PUT/PATCH re-plans it by itself).
                fresh = self.store.jobs.get(job.key)
                if fresh is None or fresh.generation != generation or fresh.next_execution_time != due:
                    return False
                job = fresh
        self.store.due.remove(job.key, due)
        return True

    def _record_postponed(self, job: JobRecord, first: datetime, latest: datetime, now: datetime) -> None:
        first_index = repeat_count(job, first)
        skipped = repeat_count(job, latest) - first_index
        message = (
            f"{skipped} occurrence(s) from {first.isoformat()} were missed while the scheduler was unavailable "
            f"and skipped; the latest, {latest.isoformat()}, runs now."
        )
        record = HistoryRecord(
            key=job.key, execution_id=f"postponed|{first.isoformat()}", expected_execution_time=first,
            start_time=now, end_time=now, action_name=JobHistoryActionName.MAIN_ACTION,
            status=JobExecutionStatus.POSTPONED, message=message, retry_count=0, repeat_count=first_index,
        )
        self.store.history.add(record, first)
