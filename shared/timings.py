"""Every timing of the pipeline's own mechanisms, in one place: leases, watchdogs, the backstop, the dispatcher's
batch span and margins, the executor's gathering windows, the limits' waits and leases, the recorder's window
and patience, health's threshold for an executor behind. docs/operate.md ("Timings") lists each field with its
default and what it trades.

`Settings.timings` holds them (the defaults, or SCHEDULER_TIMING_<FIELD>_SECONDS: shared/settings/app.py);
`Store.from_settings` hands them to the store, and every component built over the store (dispatcher, executor,
recorder, limits, leases, queues) reads them there, so one process runs on one set. A test that wants short
windows passes `Settings(timings=Timings(...))`. Values the wire contract fixes (retry and polling clamps, the
attempt's 60 s deadline), what users see of a rule (an occurrence missed when 2 minutes late, catch-ups 1 s apart,
a wait shown in the ledger past 5 s: shared/jobstate), the minute tick and the storage SDK's timeouts are not
timings of ours and stay where they are.

The timings depend on each other (a renewal must come before a lease runs out, a backstop after the watchdog's
takeover, ...): `__post_init__` checks every such relationship and raises a ValueError naming the fields.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta

PREFIX, SUFFIX = "SCHEDULER_TIMING_", "_SECONDS"  # SCHEDULER_TIMING_<FIELD>_SECONDS overrides a field
_MOST = 86_400.0  # seconds an override may name at most: no timing of ours comes near a day
_ZERO = timedelta(0)
# The documented limit of one attempt (shared/actions/http.py TIMEOUT_SECONDS), a wire-contract value: the leases
# that must outlast an attempt are checked against it.
ATTEMPT_DEADLINE = timedelta(seconds=60)
# The longest a dispatch task stays hidden after its send: its spread (SCHEDULER_DISPATCH_SPREAD_SECONDS, at most 30 s).
_TASK_DELAY = timedelta(minutes=1)

# Zero would stop a mechanism (a lease that is never held, a loop that never sleeps); the others may be 0 s.
_POSITIVE = frozenset(
    {
        "claim_lease",
        "renew_every",
        "renew_most",
        "renewal_retry",
        "renewer_poll",
        "held_report_every",
        "watchdog_margin",
        "task_watchdog_after",
        "early_hop",
        "herd_visibility",
        "concurrency_peek",
        "backoff_first",
        "record_retry_first",
        "pressure_refresh",
        "pressure_quiet",
        "circuit_probe_every",
        "pushback_counted",
    }
)


def _s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class Timings:
    # Claims and watchdogs (store/claims.py, leases.py, store/queues.py).
    claim_lease: timedelta = _s(6)  # a claim's lease past its batch's second, or past its last renewal
    renew_every: timedelta = _s(2)  # how often a live holder renews its claims and watchdogs
    # A batch held long (a backlog, a slow target) is renewed less often: each period doubles up to this, and each
    # renewal's lease outlasts its period by as much as a first one's (leases.py `Guards.renew_together`).
    renew_most: timedelta = _s(8)
    renewal_retry: timedelta = _s(1)  # a failed renewal is tried again this soon
    renewer_poll: timedelta = _s(0.5)  # how often the renewer thread looks for renewals due
    watchdog_margin: timedelta = _s(1)  # a batch's watchdog turns visible this long after the claims' lease ends
    backstop_after: timedelta = _s(45)  # a batch's backstop turns visible this long after its (first) second
    task_watchdog_after: timedelta = _s(10)  # a dispatch or cascade task's watchdog, after its send or last renewal
    dispatch_task_ttl: timedelta = _s(3600)  # a dispatch task nobody took by then expires (later ticks sweep)
    # The queue and the executor's entry (store/queues.py, executor/batch.py).
    early_visibility: timedelta = _s(5)  # an occurrence message turns visible this much before its second
    early_hop: timedelta = _s(8)  # a batch (or a rate slot) further ahead than this goes back to the queue
    # A herd's messages (HERD_ITEMS occurrences or more of one second, shared/occurrence/batch.py) turn visible this
    # much before their second: reading and claiming thousands of occurrences at once took 4-6 s on 2 cores
    # (bench/fire.py's herd of 5,000), more than `early_visibility` leaves. The queue takes visibility in whole
    # seconds, cut down, so a message turns visible up to 1 s sooner still: 7.5 s, under `early_hop`.
    herd_visibility: timedelta = _s(6.5)
    # A herd's Http attempts get ready ahead of their second (executor/batch.py `_ready_at`): admission, the
    # request and its connection; only the request's write is left for the second. This much ahead per attempt of
    # the process due at that second (about what one costs the event loop, with room), and at most:
    ready_each: timedelta = _s(0.002)
    ready_most: timedelta = _s(3)
    # Health (health.py): the executor is behind once the front waiting occurrence message, or the earliest batch a
    # process holds waiting (executor/held_report.py, written this often; a report three periods old is ignored),
    # is this late.
    executor_behind_after: timedelta = _s(30)
    held_report_every: timedelta = _s(10)
    # The dispatcher (dispatcher.py).
    batch_span: timedelta = _s(3)  # a shard's occurrences due within this of each other share a message
    spread_margin: timedelta = _s(25)  # the spread of the minute ahead's dispatch ends this long before it
    dispatch_overlap: timedelta = _s(120)  # buckets re-read behind the watermark (whole minutes)
    # A first occurrence the API plans before the dispatch horizon (first_dispatch.py): queued by the API when due
    # within `first_inline_within`, else by a dispatch task of its partition, visible `first_gather` after its send.
    first_inline_within: timedelta = _s(10)
    first_gather: timedelta = _s(1)
    # A job whose last dispatched occurrence fires about now (read by its executor already) is advanced to its next
    # one this long after that occurrence's fire instant, once the recorder's write is likely in: an advance landing
    # between the executor's read and the recorder's write refuses that write's whole transaction (dispatcher.py).
    # 0: advances never wait (and such transactions are refused and their jobs read again).
    advance_settle: timedelta = _s(2)
    # A due entry not (yet) its job's own stays this long past its instant: the write that added it may still land.
    write_in_flight: timedelta = _s(60)
    # Gathering windows: how long a first asker waits for others to share its storage call.
    batch_gather: timedelta = _s(0.05)  # batches' job reads and claims (executor/batch.py)
    job_gather: timedelta = _s(0.01)  # job reads at the second (executor/admission.py)
    collection_fresh: timedelta = _s(1)  # a collection read answers for this long (executor/collection_gate.py)
    limits_gather: timedelta = _s(0.02)  # gate and pacer asks (executor/limits.py)
    deferral_gather: timedelta = _s(0.05)  # deferred messages queued together (executor/limits.py)
    # The limits (executor/limits.py, jobstate/concurrency.py).
    connect_lead: timedelta = _s(0.1)  # a paced request connects this long before its slot
    concurrency_wait: timedelta = _s(15)  # a wait for a concurrency slot in the coroutine, at most
    concurrency_peek: timedelta = _s(0.25)  # a waiter reads the gate row this often
    backoff_first: timedelta = _s(1)  # the front of a concurrency line queued again asks this much later
    backoff_step: timedelta = _s(0.25)  # more per place behind it
    backoff_max: timedelta = _s(15)  # at most
    slot_lease: timedelta = _s(120)  # a concurrency slot held without renewal
    waiter_lease: timedelta = _s(30)  # a place in a concurrency line kept without asking again
    # Destinations that push back or fail (executor/destinations.py, jobstate/pushback.py, jobstate/circuit.py).
    deferral_deadline: timedelta = _s(3600)  # an occurrence waits for its destination at most this past its second
    pressure_refresh: timedelta = _s(2)  # a process reads a destination it knows to push back or fail this often
    pressure_quiet: timedelta = _s(30)  # a budget widens after this long without a push-back, and per this after
    pressure_forget: timedelta = _s(300)  # and is dropped after this long without one
    circuit_sustained: timedelta = _s(10)  # two failures in a row this far apart open a circuit
    circuit_probe_every: timedelta = _s(5)  # an open circuit lets one probe go per this
    circuit_answer_wait: timedelta = _s(1)  # attempts held by it come back this long after the probe's instant
    pushback_counted: timedelta = _s(1)  # a push-back's estimate counts the requests accepted in the last this long
    race_backoff: timedelta = _s(0.005)  # a writer that lost an ETag race on a shared limits row pauses up to this x
    # its lost races (at most 10) before it reads again (executor/limit_slots.py, executor/destinations.py)
    # Overlap (jobstate/overlap.py): a running occurrence's marker lapses this long after its latest due.
    running_lease: timedelta = _s(180)
    # The recorder (executor/recorder.py) and every write after an action (executor/persist.py).
    record_window: timedelta = _s(0.2)  # the first answer waits this long for others to share its write
    record_patience: timedelta = _s(300)  # a record is retried through storage faults this long
    record_retry_first: timedelta = _s(0.2)  # its first retry after this, doubling
    record_retry_max: timedelta = _s(2)  # up to this

    @property
    def watchdog_after(self) -> timedelta:
        """A batch's watchdog turns visible this long after its (first) second: once its claims' leases ran out."""
        return self.claim_lease + self.watchdog_margin

    @property
    def takeover_wait(self) -> timedelta:
        """How long a claimant watches an expired lease before taking it: a renewal period and a retry, so a
        runner that is alive (a failed renewal is retried every `renewal_retry`) shows itself first."""
        return self.renew_every + self.renewal_retry

    @property
    def longest_lease(self) -> timedelta:
        """The longest lease a renewal grants past its instant: `claim_lease` for a period of `renew_most`."""
        return self.claim_lease + self.renew_most - self.renew_every

    @property
    def renewal_ahead(self) -> timedelta:
        """How early a batch's renewal may come, to share the pass of one that is due (leases.py `renew_together`):
        half a first period. Early is safe (a lease is pushed from the renewal's instant); it makes one pass write a
        collection's claims of many batches in one transaction instead of each batch its own."""
        return self.renew_every / 2

    @property
    def backstop_gap(self) -> timedelta:
        """How far the backstop stays behind the watchdog; a renewal pushes it when it comes nearer than half."""
        return self.backstop_after - self.watchdog_after

    def ready_lead(self, attempts: int) -> timedelta:
        """How far ahead of its second an Http attempt gets ready when `attempts` of its process are due at that
        second (executor/batch.py `_ready_at`): `ready_each` for each, at most `ready_most`."""
        return min(self.ready_most, self.ready_each * attempts)

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> Timings:
        """The defaults, with each SCHEDULER_TIMING_<FIELD>_SECONDS of `env` (a number of seconds) in its field's
        place. A name that is no field, a value that is no number of seconds, or timings that contradict each other
        are refused: a ValueError that names the setting or the fields."""
        changes: dict[str, timedelta] = {}
        for key, text in env.items():
            if not key.startswith(PREFIX) or not text.strip():
                continue
            name = key[len(PREFIX) : -len(SUFFIX)].lower() if key.endswith(SUFFIX) else ""
            if name not in FIELDS:
                raise ValueError(f"{key} names no timing (docs/operate.md, Timings, lists them)")
            try:
                seconds = float(text.strip())
            except ValueError:
                seconds = math.nan
            if not 0 <= seconds <= _MOST:  # NaN included
                raise ValueError(f"{key} must be a number of seconds from 0 to {_MOST:g}")
            changes[name] = timedelta(seconds=seconds)
        return cls(**changes)

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if not isinstance(value, timedelta):
                raise ValueError(f"timings: {item.name} must be a time span, not {type(value).__name__}")
            if value < _ZERO or (value == _ZERO and item.name in _POSITIVE):
                raise ValueError(
                    f"timings: {item.name} must be {'more than' if item.name in _POSITIVE else 'at least'} 0 s"
                )
        broken = [why for holds, why in self._relations() if not holds]
        if broken:
            raise ValueError("timings: " + "; ".join(broken))

    def _relations(self) -> Iterator[tuple[bool, str]]:
        renewal = self.renew_every + self.renewer_poll  # the longest between two renewals of a live holder
        yield (
            self.claim_lease >= 3 * self.renew_every,
            "claim_lease must be at least 3 x renew_every (two renewals may fail before a lease runs out)",
        )
        yield (self.renew_most >= self.renew_every, "renew_most must be at least renew_every")
        yield (
            self.batch_span + self.renew_every + self.renewer_poll < self.claim_lease,
            "batch_span + renew_every + renewer_poll must be less than claim_lease (a batch's first renewal, after its "
            "last second, comes before the leases taken for its first second lapse)",
        )
        yield (
            self.backstop_after > self.watchdog_after + self.takeover_wait,
            "backstop_after must exceed claim_lease + watchdog_margin + renew_every + renewal_retry (the watchdog "
            "and its takeover come first)",
        )
        yield (
            self.backstop_gap / 2 > self.renew_most + self.renewer_poll,
            "half of backstop_after - claim_lease - watchdog_margin must exceed renew_most + renewer_poll (a "
            "renewal pushes the backstop before it turns visible)",
        )
        yield (
            self.task_watchdog_after > renewal,
            "task_watchdog_after must exceed renew_every + renewer_poll (a live task renews it before it shows)",
        )
        yield (
            self.dispatch_task_ttl > self.task_watchdog_after + _TASK_DELAY,
            "dispatch_task_ttl must exceed task_watchdog_after + 60 s (a task's delay and its watchdog's visibility "
            "lie within its time to live)",
        )
        yield (
            self.early_hop > self.early_visibility,
            "early_hop must exceed early_visibility (a message that turned visible on time never hops)",
        )
        yield (
            self.early_visibility <= self.herd_visibility < self.early_hop,
            "herd_visibility must be at least early_visibility and under early_hop (a herd's message never hops)",
        )
        yield (
            self.ready_most < self.early_visibility,
            "ready_most must be under early_visibility (a herd's batches arrive before it gets ready)",
        )
        yield (
            self.spread_margin > self.task_watchdog_after,
            "spread_margin must exceed task_watchdog_after (a dead host's dispatch task comes back before its minute)",
        )
        yield (
            self.first_inline_within >= self.first_gather + self.early_visibility,
            "first_inline_within must be at least first_gather + early_visibility (a first occurrence left to a "
            "dispatch task is queued before its message should turn visible)",
        )
        yield (
            self.dispatch_overlap % timedelta(minutes=1) == _ZERO,
            "dispatch_overlap must be whole minutes (the due index's buckets)",
        )
        yield (
            self.waiter_lease >= 2 * self.backoff_max,
            "waiter_lease must be at least 2 x backoff_max (a waiter queued again asks before its place lapses)",
        )
        yield (
            self.waiter_lease > 1.5 * self.concurrency_wait,
            "waiter_lease must exceed 1.5 x concurrency_wait (a waiter renews its place well before it lapses)",
        )
        yield (self.pressure_forget > self.pressure_quiet, "pressure_forget must exceed pressure_quiet")
        yield (self.backoff_first <= self.backoff_max, "backoff_first must not exceed backoff_max")
        yield (
            3 * self.held_report_every <= self.executor_behind_after,
            "held_report_every must be at most a third of executor_behind_after (a report three periods old is "
            "ignored, so a process's held batches are seen before they are that late)",
        )
        yield (self.record_retry_first <= self.record_retry_max, "record_retry_first must not exceed record_retry_max")
        yield (
            self.slot_lease > ATTEMPT_DEADLINE,
            "slot_lease must exceed an attempt's deadline (60 s): only a vanished holder lets its slot lapse",
        )
        yield (
            self.running_lease > ATTEMPT_DEADLINE + self.longest_lease + self.watchdog_margin + self.takeover_wait,
            "running_lease must exceed an attempt's deadline (60 s) + claim_lease + renew_most + watchdog_margin + "
            "renewal_retry (only a vanished runner lets its marker lapse)",
        )


FIELDS = tuple(item.name for item in fields(Timings))
