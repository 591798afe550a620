"""The recorder: what an attempt's action answered, made durable moments after the answer, independently of the
rest of its batch, and written in one go with whatever else answered meanwhile.

An attempt is done once its job lists it (`JobRecord.recent_claims`, written with the counters by
`jobstate.after_attempt`): a worker that takes the attempt over after a crash then only marks it done. So
what an action answered must reach its job at once, not when the slowest action of its batch has answered
(up to the action deadline later): a crash in between would run every fast attempt of the batch again.
`record` takes an attempt as its action returns and hands back a future; the recorder waits `record_window` for
more answers (short against the second within which an answer must be durable, issue 23; long against the few
milliseconds between the answers of a herd), then writes all it holds:

1. the history rows (keyed by attempt: writing one again overwrites it), one entity-group transaction per
   collection's ATTEMPTS_PER_GROUP attempts (store/history.py), with the dead letter of a run that ended failed
   for good in its attempt's transaction (dead_lettered.py), and the follow-up messages (a retry, the error
   action), side by side;
2. then the jobs (counters, state, done-ness): one request per jobs partition (a collection), an entity-group
   transaction of up to 100 jobs, each under its ETag. The jobs that changed meanwhile (the dispatcher
   advanced them, an API write) are read again together and written in a further transaction
   (store/job_updates.py); one that still changes is then written alone.

Each step comes before the one that depends on it, so a crash between them repeats a step, never loses one:
every attempt moves through the table of recording_order.py (`Recording`), which refuses a move out of order.
Storage requests per attempt: 1/k history write and 1/k job write when k jobs of one collection answered
within a window (one each when attempts were written alone). Every write is retried through storage faults
for up to `record_patience` (the batch's guard keeps the claims meanwhile): giving up would hand the attempt back
and run the action again, so a storage outage is waited out instead; an attempt whose record cannot be written
fails its own future, not the others'. The timings are the settings' (shared/timings.py), as the store carries
them.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from ..clock import Clock
from ..jobstate import settled
from ..keys import CollectionKey
from ..occurrence import OccurrenceMessage
from ..records import JobRecord
from ..store import ConcurrencyError, Store, read_modify_write
from ..store.job_updates import Updated, update_together
from ..store.tables import chunks, grouped
from ..store.transaction import MAX_OPERATIONS
from ..threads import RECORD, RECORD_WINDOW, Threads
from .dead_lettered import dead_letter_row, history_groups
from .fired import Fired
from .persist import persist
from .recording_order import Recording, Step
from .released import released_message, waiting_since

log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass
class _Pending:
    fired: Fired
    at: float  # when its action answered, on the clock's monotonic time
    order: Recording  # its step in the recording order, and its future


class Recorder:
    """Writes fired attempts in windows; one writer thread per process, started on first use. The windows are on
    the runtime's clock; the writer ends when the runtime's threads close (shared/threads.py `Threads.thread`), and
    an answer it holds then, or that comes after, fails its future (the batch's copies bring the attempt back)."""

    def __init__(self, store: Store, clock: Clock, threads: Threads) -> None:
        self.store = store
        self.clock = clock
        self.timings = store.timings
        self._window = self.timings.record_window.total_seconds()
        self._pending: list[_Pending] = []
        self._changed = threading.Condition()
        self._threads = threads
        self._started = False  # the writer thread
        self._closed = False  # the runtime's threads closed: no window is written any more
        self._pool = threads.lane(RECORD)  # writes side by side (shared/threads.py says how many, and why)
        self._flushes = threads.lane(RECORD_WINDOW)
        self._watchers: list[Callable[[Recording], None]] = []

    def watch(self, listen: Callable[[Recording], None]) -> None:
        """Hand each attempt's recording to `listen` as it ends, done or failed, before its future ends: its path
        through the recording order, for a test or a diagnosis."""
        self._watchers.append(listen)

    def _ended(self, recording: Recording) -> None:
        for listen in list(self._watchers):
            listen(recording)

    def record(self, fired: Fired) -> Future[None]:
        """Record the attempt within about `record_window`; the future ends when its job says it is done."""
        pending = _Pending(fired, self.clock.monotonic(), Recording(fired.message.claim_id, self._ended))
        with self._changed:
            if not self._started and not self._closed:
                try:
                    self._threads.thread("recorder", self._run, self._close)
                    self._started = True
                except RuntimeError:  # the runtime's threads are closed
                    self._closed = True
            if self._closed:
                _settle([pending], RuntimeError("the recorder is closed: the process is going away"))
                return pending.order.future
            self._pending.append(pending)
            if len(self._pending) == 1:  # the writer waits for a first answer; in a window, only for its end
                self._changed.notify()
        return pending.order.future

    def _close(self) -> None:
        """The runtime's threads close: the writer ends at once, even mid-window."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._pending) or self._closed)
                if not self._closed:  # the window, from the first answer; answers coming meanwhile join it
                    left = self._pending[0].at + self._window - self.clock.monotonic()
                    self.clock.wait_for(self._changed, lambda: self._closed, left)
                taken, self._pending = self._pending, []
                closed = self._closed
            if closed:
                _settle(taken, RuntimeError("the process closed before these attempts were recorded"))
                return
            self._hand_on(taken)

    def _hand_on(self, taken: list[_Pending]) -> None:
        """The window to its lane, written beside the windows before it, still being written: a slow write (a
        herd's, a storage hiccup) must not hold the next window's answers back."""
        try:
            writing = self._flushes.submit(self._flush, taken)
        except RuntimeError as error:  # the lane closed under it
            _settle(taken, error)
            return
        # Dropped by the lane's close before it ran: never leave a batch waiting on a future nobody ends.
        closed = RuntimeError("the process closed before these attempts were recorded")
        writing.add_done_callback(lambda done: _settle(taken, closed) if done.cancelled() else None)

    def _flush(self, taken: list[_Pending]) -> None:
        try:
            self._write(taken)
        except BaseException as error:  # never leave a batch waiting on a future nobody ends
            log.exception("recording %d attempts failed", len(taken))
            _settle(taken, error)

    def _write(self, taken: list[_Pending]) -> None:
        """History (a transaction per collection) and follow-ups side by side, then the jobs, one request per
        collection."""
        groups = history_groups(taken, _collection_of, lambda pending: pending.fired)  # dead letters counted
        written = self._each(self._before_jobs, groups)
        ready = [
            pending
            for group, failure in zip(groups, written, strict=True)
            if failure is None
            for pending in group
            if not pending.order.ended  # a move refused: failed, goes no further
        ]
        requests = [
            group
            for items in grouped(ready, _collection_of)
            # The attempts of each job together (a retry and a run-now of one job may answer in one window).
            for group in chunks(grouped(items, lambda pending: pending.fired.message.job), MAX_OPERATIONS)
        ]
        self._each(self._jobs, requests)

    def _each(self, write: Callable[[_T], None], items: list[_T]) -> list[BaseException | None]:
        def guarded(item: _T) -> BaseException | None:
            try:
                write(item)
            except BaseException as error:  # one attempt's failure is its own
                return error
            return None

        return list(self._pool.map(guarded, items)) if len(items) > 1 else [guarded(item) for item in items]

    def _before_jobs(self, group: list[_Pending]) -> None:
        """The history of attempts of one collection, in one transaction; then what follows each."""
        try:
            records = [(pending.fired.history, pending.fired.message.attempt_due) for pending in group]
            # A run ended failed for good: its dead letter in the same transaction (dead_lettered.py).
            dead = [row for pending in group if (row := dead_letter_row(pending.fired)) is not None]
            add = functools.partial(self.store.history.add_group, records, dead)
            persist(self.clock, self.timings, add, group[0].fired.message.claim_id)
            for pending in [pending for pending in group if pending.order.move(Step.HISTORY_WRITTEN)]:
                follow_up = pending.fired.follow_up
                if follow_up is not None:
                    send = functools.partial(self._send, follow_up)
                    persist(self.clock, self.timings, send, pending.fired.message.claim_id)
                    pending.order.move(Step.FOLLOW_UP_SENT)
        except BaseException as error:
            _settle(group, error)
            raise

    def _send(self, message: OccurrenceMessage) -> None:
        self.store.queue.send(message, self.clock.now())

    def _jobs(self, request: list[list[_Pending]]) -> None:
        """One collection's jobs in one transaction; those changed meanwhile (the dispatcher advanced them, an API
        write) read again together and written in another (store/job_updates.py); one still changing, alone."""
        now = self.clock.now()
        lease = self.timings.running_lease
        changes = [(_Change(attempts, now, lease), attempts) for attempts in request]
        answers: list[Updated] = []

        def write() -> None:
            answers[:] = update_together(self.store.jobs, [(a[0].fired.job, change) for change, a in changes])

        try:
            persist(
                self.clock,
                self.timings,
                write,
                f"{len(changes)} job(s) of {request[0][0].fired.message.job.collection_key}",
            )
        except BaseException as error:
            for _, attempts in changes:
                _settle(attempts, error)
            return
        for (change, attempts), answer in zip(changes, answers, strict=True):
            if isinstance(answer, ConcurrencyError):
                try:  # still changing: alone, re-read at each lost race
                    update = functools.partial(self._update, attempts, change)
                    persist(self.clock, self.timings, update, attempts[0].fired.message.claim_id)
                except BaseException as error:
                    _settle(attempts, error)
                    continue
            elif isinstance(answer, BaseException):
                _settle(attempts, answer)
                continue
            written = [pending for pending in attempts if pending.order.move(Step.JOB_WRITTEN)]  # or it is gone
            if answer is not None:  # None: the job is gone, nothing to release
                self._release(change)
            _settle(written, None)

    def _update(self, attempts: list[_Pending], change: _Change) -> None:
        job = attempts[0].fired.job
        try:
            read_modify_write(
                lambda: self.store.jobs.get(job.key),
                change,
                lambda record, _: self.store.jobs.replace(record),
                attempts=10,
                current=job,
            )
        except ConcurrencyError as exc:
            raise ConcurrencyError(f"job {job.key.resource_id} kept changing; status update abandoned") from exc

    def _release(self, change: _Change) -> None:
        """Queue the occurrences the written ends let go (overlapPolicy BufferOne). Best effort: a waiter whose
        release is lost comes back by itself when its place lapses (admission.py)."""
        for pending, message in change.released:
            if not pending.order.move(Step.RELEASED):  # only once the write that ends its occurrence landed
                continue
            try:
                send = functools.partial(self.store.queue.send, message, self.clock.now())
                persist(self.clock, self.timings, send, message.claim_id)
            except Exception:
                log.exception("the release of occurrence %s was not queued; it comes back by itself", message.claim_id)


class _Change:
    """The change of a job's status by its attempts, in the order they answered (None: nothing to count), with
    its overlap marker settled by each (`jobstate.settled`: an end lets the occurrence go and releases the one
    waiting, a retry or poll holds it). `released`: the messages to queue once the write landed (of the latest
    application: it may be applied again after a lost race). `lease`: the timings' `running_lease`."""

    def __init__(self, attempts: list[_Pending], now: datetime, lease: timedelta) -> None:
        self.attempts = attempts
        self.now = now
        self.lease = lease
        self.released: list[tuple[_Pending, OccurrenceMessage]] = []  # by the attempt whose end let it go

    def __call__(self, record: JobRecord) -> JobRecord | None:
        self.released = []
        updated = record
        for pending in self.attempts:
            fired = pending.fired
            after = fired.apply(updated)
            if after is None:
                continue
            since = waiting_since(after)
            follow_up = fired.follow_up.due if fired.follow_up is not None else None
            ends = fired.outcome.kind.ends_occurrence
            end = settled(after, fired.message.execution_id, ends, follow_up, self.now, self.lease)
            if end.released is not None:
                self.released.append((pending, released_message(after.key, end.released, since, self.now)))
            updated = end.job or after
        return None if updated is record else updated


def _settle(attempts: list[_Pending], error: BaseException | None) -> None:
    """Done (their job written), or failed unless they have ended already."""
    for pending in attempts:
        if error is None:
            pending.order.move(Step.DONE)
        else:
            pending.order.fail(error)


def _collection_of(pending: _Pending) -> CollectionKey:
    return pending.fired.message.job.collection_key
