"""The process's threads: one pool, shared out in named lanes, and the loops that run until the pool is closed.

Contract:
- `Threads` owns the process's one `ThreadPoolExecutor` (the only one of shared/, tests/test_threads.py keeps it
  so). Every blocking call the scheduler hands off its caller's thread runs on it, through a *lane*.
- A lane (`Lane`, shared/lanes.py) is a bounded share of the pool: at most `size` of its calls run at once, the
  others wait in the lane's own FIFO, in order; `submit` never blocks, so it works as a pool does.
- Every lane and its size is in one table, LANES, below; the pool's `max_workers` is the sum of the sizes. So a
  call its lane admits finds a thread at once: a lane never waits for a thread another lane holds, and a call of
  one lane may wait on calls of another without starving or deadlocking, as long as the lanes wait on each other
  without a cycle. Who waits on whom is WAITS_ON, below (tests/test_threads.py keeps it without a cycle): a
  dispatch task on its job reads and advances (dispatch-fanout), on its cascade page's jobs (cascade) and, closing
  its watchdog, on the renewal in progress (dispatch-renewer); an attempt's storage call, closing its batch's
  guard, on the renewal in progress (attempt-renewer); a guard's renewal on its claims' groups (lease-renewal); a
  record window on its writes (record). No other lane waits on a lane, and none waits on itself: a use that makes
  a lane wait on another belongs in WAITS_ON. The host's own threads (API requests) wait on lifecycle, cascade (a
  PUT finishing a queued delete) and routing; the renewers' and the recorder's loops on their lanes.
- `Threads.share(name)`: where one caller fans out on a lane (a dispatch task, a cascade page), a lane of its own
  over the named one that runs at most the table's `per_call` of that caller's calls at once: the bound each
  caller had when it built a pool per call, within a lane sized for the callers that run at once.
- `Threads(clock)`: the loops' periods are on that clock (shared/clock.py), so a manual clock drives them in tests.
- `Threads.loop(name, step, period)`: a thread of its own that runs `step` every `period` until `close` (the
  lease renewers'); a step that raises is logged and runs again at the next period.
- `Threads.thread(name, run, stop)`: a thread of its own that runs `run` until it returns (the recorder's writer,
  which waits on a condition of its own); `close` calls `stop`, which makes `run` return, and waits for it as for
  a loop.
- The loops of the renewers (one per kind of held work, shared/renewer.py) run on `Threads.loop`, their renewals on
  the lanes named for them.
- `Threads.close()`: no lane accepts work any more (`submit` raises RuntimeError, as a shut pool's does), the calls
  waiting in the lanes are cancelled, every loop and thread ends (its stop flag is set, each `stop` called), and the
  pool shuts down; it waits up to `timeout` seconds of real time for the calls still running (threads end in real
  time, whatever the clock), never for ever. Idempotent.

The sizes are those the scheduler had when each use built a pool of its own (issue 35): the bench figures rest on
them, so a size changes only with a measurement.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from .clock import Clock, SystemClock
from .lanes import Lane

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

ATTEMPT = "attempt"
RECORD = "record"
RECORD_WINDOW = "record-window"
LEASE_RENEWAL = "lease-renewal"
ATTEMPT_RENEWER = "attempt-renewer"
DISPATCH_RENEWER = "dispatch-renewer"
LIMITS_DEFERRAL = "limits-deferral"
DISPATCH_TASK = "dispatch-task"
DISPATCH_FANOUT = "dispatch-fanout"
CASCADE = "cascade"
LIFECYCLE = "lifecycle"
BLOCKING_ACTION = "blocking-action"
OUTBOUND_LOOKUP = "outbound-lookup"
ROUTING = "routing"


@dataclass(frozen=True)
class LaneSize:
    size: int  # calls of the lane running at once, in the process
    per_call: int | None = None  # calls of one caller running at once (`Threads.share`), for a lane callers fan out on


_DISPATCH_TASKS = 4

LANES: dict[str, LaneSize] = {
    # The executor's storage round trips, of every batch of the process (shared/executor/batch.py; the actions do
    # not run here: they are coroutines). Enough that a herd's claims go side by side; few enough that the process
    # does not thrash.
    ATTEMPT: LaneSize(64),
    # The recorder's writes side by side: the history rows of a herd's window (one per job, each in its own
    # partition), then its jobs' requests (shared/executor/recorder.py).
    RECORD: LaneSize(16),
    RECORD_WINDOW: LaneSize(4),  # windows written side by side: a slow one must not hold the next window back
    # Claims renewed side by side, a transaction per 100 of one collection (store/claims.py `renew_group`): a
    # process holding a herd of slow actions (a thousand claims, possibly of a thousand collections) renews them
    # all well within `renew_every`, where one request at a time (5-10 ms each in a region) would let leases lapse.
    LEASE_RENEWAL: LaneSize(16),
    # Items renewed side by side, per renewer (shared/leases.py): the batches' guards (each then its claims' groups
    # side by side, on lease-renewal), and the dispatch and cascade tasks' watchdogs. One at a time, a busy process
    # holding many batches (a herd's dozens, each with a hundred claims) renewed the last ones seconds late, after
    # their watchdogs had turned visible and run their batches a second time.
    ATTEMPT_RENEWER: LaneSize(8),
    DISPATCH_RENEWER: LaneSize(8),
    # The limits' deferrals (shared/executor/deferrals.py `requeue`): few, so a herd's deferrals leave the event loop
    # its GIL.
    LIMITS_DEFERRAL: LaneSize(2),
    # Dispatch-queue messages handled at once per process (shared/dispatch_trigger.py), on this lane rather than
    # the worker's thread pool, which every API request needs.
    DISPATCH_TASK: LaneSize(_DISPATCH_TASKS),
    # A dispatch task's (or a tick's) job reads and advances side by side (shared/due_jobs.py): 4 per task, for
    # each task the dispatch-task lane runs at once. A shard's 750 entries took about 2 s with 16 as with 4 (the
    # work is the process's CPU, not waiting), and 16 at once took the GIL from the executor's event loop: the
    # seconds when the minute ahead is dispatched ran the latest (docs/execution.md, the steady bench).
    DISPATCH_FANOUT: LaneSize(4 * _DISPATCH_TASKS, per_call=4),
    # A cascade page's jobs moved or purged side by side (shared/lifecycle/cascade.py): 8 per page, for each task
    # the dispatch-task lane runs at once.
    CASCADE: LaneSize(8 * _DISPATCH_TASKS, per_call=8),
    # Two storage round trips of one API request side by side (shared/lifecycle/parallel.py): one small lane
    # serves every request, so no thread is started per call.
    LIFECYCLE: LaneSize(16),
    # Targets that block (Service Bus, shared/actions): each holds one attempt while it waits for its broker.
    BLOCKING_ACTION: LaneSize(64),
    # Name lookups of outbound requests (shared/actions/outbound.py), so an attempt can stop waiting for a slow
    # resolver at its deadline.
    OUTBOUND_LOOKUP: LaneSize(8),
    # A page of collections read from every storage account side by side, one call per account (shared/store/
    # routing.py): one round trip of latency. Room for a few listings at once over a few accounts.
    ROUTING: LaneSize(16),
}

# A call on the key waits for calls on each lane named (the module's docstring says where): no cycle, ever.
WAITS_ON: dict[str, tuple[str, ...]] = {
    DISPATCH_TASK: (DISPATCH_FANOUT, CASCADE, DISPATCH_RENEWER),
    ATTEMPT: (ATTEMPT_RENEWER,),
    ATTEMPT_RENEWER: (LEASE_RENEWAL,),
    RECORD_WINDOW: (RECORD,),
}

_instances = itertools.count(1)


class Threads:
    """The process's pool and its lanes (LANES); `close` ends them and every loop."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.name = f"threads{next(_instances)}"
        self._clock: Clock = clock or SystemClock()
        self._started: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(
            sum(spec.size for spec in LANES.values()), thread_name_prefix=self.name, initializer=self._count
        )
        self._lanes = {name: Lane(name, spec.size, self._pool) for name, spec in LANES.items()}
        self._stop = threading.Condition()  # notified when `_stopping` is set: the loops' waits end at once
        self._stopping = False
        self._stops: list[Callable[[], None]] = []  # of the threads (`thread`)
        self._closed = False

    def lane(self, name: str) -> Lane:
        """The lane of that name (LANES)."""
        return self._lanes[name]

    def share(self, name: str) -> Lane:
        """A share of the named lane for one caller: at most the table's `per_call` of its calls at once."""
        per_call = LANES[name].per_call
        if per_call is None:
            raise ValueError(f"lane {name} has no per-call share")
        return self._lanes[name].share(per_call)

    def loop(self, name: str, step: Callable[[], None], period: float) -> None:
        """Run `step` every `period` seconds on a thread of its own until `close`."""

        def run() -> None:
            while True:
                with self._stop:
                    if self._clock.wait_for(self._stop, lambda: self._stopping, period):
                        return
                try:
                    step()
                except Exception:
                    if self._stopping:
                        return  # closed under it: its lanes refuse work now
                    log.exception("%s failed; it runs again in %.1f s", name, period)

        self._start(name, run)

    def thread(self, name: str, run: Callable[[], None], stop: Callable[[], None]) -> None:
        """Run `run` on a thread of its own until it returns; `close` calls `stop`, which must make it return."""
        self._start(name, run, stop)

    def _start(self, name: str, run: Callable[[], None], stop: Callable[[], None] | None = None) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name} is closed")
            thread = threading.Thread(target=run, name=f"{self.name}-{name}", daemon=True)
            self._started.append(thread)
            if stop is not None:
                self._stops.append(stop)
        thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop accepting work, cancel what waits in the lanes, end the loops, shut the pool down; waits up to
        `timeout` seconds for the calls still running and the loops to end."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            stops = list(self._stops)
        with self._stop:
            self._stopping = True
            self._stop.notify_all()
        for stop in stops:
            try:
                stop()
            except Exception:  # the others still stop
                log.exception("a thread of %s did not take its stop", self.name)
        for lane in self._lanes.values():
            lane.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False)
        deadline = time.monotonic() + timeout  # real time: a join knows no other
        with self._lock:
            started = list(self._started)
        for thread in started:
            if thread is not threading.current_thread():
                thread.join(max(deadline - time.monotonic(), 0.0))

    def alive(self) -> list[threading.Thread]:
        """The pool's threads and loops still running (none, some moments after `close`)."""
        with self._lock:
            return [thread for thread in self._started if thread.is_alive()]

    def _count(self) -> None:
        with self._lock:
            self._started.append(threading.current_thread())
