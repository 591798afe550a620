"""What an operator (and GET /api/health) needs to know without logs: is the timer ticking, is work piling up.

The dispatcher calls `record_tick` after every tick (whether telemetry is on or off): it measures the
due-index backlog, the oldest overdue occurrence (per collection too), the executor's backlog (below), the poison
queue's depth and the jobs whose expectation of success is broken (shared/expectations.py), and writes a heartbeat row
(`dispatcher`/`heartbeat` in the State table, next to the watermark) and the silent jobs' row
(`expectations.record`). It returns what it saw, which the dispatcher hands to telemetry. `snapshot` reads both
back with a fresh backlog and the host's clock skew against storage; `problems` judges a snapshot. Silent jobs
are not among the problems: a job that does not succeed is its owner's to look at, not a fault of the service.
Both raise `azure.core.exceptions.AzureError` when storage is unreachable. Nothing here holds a secret: instants,
counts, and the ids of silent jobs (shown by shared/api/health.py only where the API is open).

The heartbeat is watched from outside the process that writes it: GET /api/health answers 503 once it is
older than two intervals, and an availability test and an alert rule in infra/ watch that answer and the
heartbeat metric. A host that has not ticked since it began serving is held to its own start instead
(`Snapshot.behind`): it cannot have made a tick before it ran, so a heartbeat or a backlog left from before
it does not fail it until two intervals after its start (the problems still say what was seen).

Backlog: due-index entries whose minute has already passed. The dispatcher works a minute ahead and
deletes each entry it dispatches, so on a healthy deployment this is 0 right after a tick; anything else
is an occurrence that should have been queued and was not (yet).

The executor's backlog (`executor_backlog`): occurrences queued and not yet run, which is where work piles up
when more is due than the hosts carry (the dispatcher keeps up, the executor does not). Three requests, each time
health is read and each tick's `record_tick`: the occurrence queue's properties (its approximate message count,
hidden messages too: batches not yet due and every batch's watchdog and backstop copies), a peek at its front
message (which changes nothing), whose earliest due says how late the front waiting occurrence is, and the
processes' held reports (store/held.py). A message is waiting once it is visible: one a worker holds (received,
so invisible) or one not yet due is not, and the front visible message is at most `early_visibility` early,
counted as 0 s late. The queue keeps about the order of sending, so the front is about the longest waiting in the
queue; but under a backlog each host has received up to host.json's batchSize + newBatchThreshold messages and
runs a few at a time (executor/late_line.py), and those are older still: each process writes the earliest due of
the batches it holds waiting every `held_report_every` (executor/held_report.py), and a report fresher than three
periods counts as waiting too. The lateness is that of the earliest of the two. Past
`executor_behind_after` (timings, 30 s) `problems` says the executor is behind by that much with the count:
degraded, not down (GET /api/health still answers 200, shared/api/health.py), since occurrences still run, late,
and only more hosts or less load help; a dispatcher behind is down (503), since then nothing is queued at all. A
front message that is not ours (the executor poisons it when it comes) tells no due: not behind. The tick deletes
the reports of processes gone (older than three periods).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .expectations import Broken, Silence, check, record, recorded
from .keys import CollectionKey
from .occurrence import MalformedMessage, OccurrenceBatch
from .store import Store, bucket_of
from .store.held import HeldReports
from .store.tables import as_datetime, as_int
from .timings import Timings

log = logging.getLogger(__name__)

_PARTITION = "dispatcher"
_ROW = "heartbeat"
# Counting stops here: past it the exact number does not change what an operator does.
BACKLOG_LIMIT = 1000
# The dispatcher's timer runs every minute (function_app.py, "0 * * * * *"); two intervals without a heartbeat,
# or an occurrence overdue that long, mean the dispatcher is behind.
HEARTBEAT_INTERVAL = timedelta(minutes=1)
BEHIND_AFTER = 2 * HEARTBEAT_INTERVAL
# The host's clock may differ from storage's by this much before it is worth a word (queue visibility and
# due instants are computed on the host's clock; storage's Date header has whole seconds).
CLOCK_SKEW_LIMIT = timedelta(seconds=5)


@dataclass(frozen=True)
class Overdue:
    count: int  # entries in minute buckets before the current one, counted up to BACKLOG_LIMIT
    oldest: datetime | None = None
    oldest_by_collection: dict[CollectionKey, datetime] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecutorBacklog:
    queued: int  # messages in the occurrence queue, about (hidden ones too)
    front_due: datetime | None = None  # the earliest due of the front visible message (None: none, or not ours)
    held_due: datetime | None = None  # the earliest due of the batches the processes hold waiting (store/held.py)
    held: int = 0  # how many batches they hold waiting

    def lateness(self, now: datetime) -> timedelta | None:
        """How late the earliest waiting occurrence is at `now`, in the queue or held by a process (0 s when not yet
        due; None: nothing waiting)."""
        waiting = [due for due in (self.front_due, self.held_due) if due is not None]
        return max(now - min(waiting), timedelta(0)) if waiting else None


@dataclass(frozen=True)
class TickObservation:
    at: datetime
    backlog: int
    poison_depth: int
    oldest_overdue: datetime | None = None
    overdue_by_collection: dict[CollectionKey, datetime] = field(default_factory=dict)
    broken_expectations: list[Broken] = field(default_factory=list)
    executor: ExecutorBacklog | None = None  # None: the queue could not be read this tick


@dataclass(frozen=True)
class Snapshot:
    now: datetime
    last_tick: datetime | None
    last_tick_duration: float | None
    last_tick_tasks: int | None  # dispatch tasks the tick sent (minute buckets x shards)
    backlog: int
    poison_depth: int
    oldest_overdue: datetime | None = None
    watermark: datetime | None = None  # where ticks have got to (set once when the store was first made ready)
    clock_skew: timedelta | None = None  # the host's clock minus storage's, about (None: not measured)
    silence: Silence = field(default_factory=Silence)  # the jobs past their expectation, as the last tick found
    host_started: datetime | None = None  # when the host that answers began serving (None: not known)
    executor: ExecutorBacklog = field(default_factory=lambda: ExecutorBacklog(0))
    executor_behind_after: timedelta = Timings().executor_behind_after

    @property
    def since_last_tick(self) -> timedelta | None:
        return self.now - self.last_tick if self.last_tick else None

    @property
    def oldest_overdue_age(self) -> timedelta | None:
        return self.now - self.oldest_overdue if self.oldest_overdue else None

    @property
    def executor_lateness(self) -> timedelta | None:
        return self.executor.lateness(self.now)

    @property
    def executor_behind(self) -> bool:
        """The earliest waiting occurrence is later than `executor_behind_after`: more is due than the hosts run."""
        late = self.executor_lateness
        return late is not None and late > self.executor_behind_after

    @property
    def fresh(self) -> bool:
        """The answering host has not ticked yet: it began serving after the last heartbeat, or there is none."""
        return self.host_started is not None and (self.last_tick is None or self.last_tick < self.host_started)

    @property
    def behind(self) -> bool:
        """The dispatcher is behind: no heartbeat for two intervals (none ever, once the store has been ready
        that long), or an occurrence overdue for two intervals. A host that has not ticked yet is held to its own
        start instead: the heartbeat's age and the backlog were left by whatever ran before it (a host stopped
        for an hour, the development storage of yesterday's run), and its first tick comes within an interval."""
        if self.fresh:
            assert self.host_started is not None
            return self.now - self.host_started > BEHIND_AFTER
        if self.last_tick is None:
            started = self.watermark + HEARTBEAT_INTERVAL if self.watermark else None
            stopped = started is None or self.now - started > BEHIND_AFTER
        else:
            stopped = self.now - self.last_tick > BEHIND_AFTER
        age = self.oldest_overdue_age
        return stopped or (age is not None and age > BEHIND_AFTER)


def overdue(store: Store, now: datetime, limit: int = BACKLOG_LIMIT) -> Overdue:
    """Due-index entries in minute buckets before the current one (in every storage account), counted up to
    `limit`, and the oldest of them, overall and per collection."""
    count = 0
    oldest: dict[CollectionKey, datetime] = {}
    for account in range(store.due.accounts):
        # Partition keys start with the bucket (yyyyMMddHHmm), so one range query finds every older partition.
        found = store.due.in_account(account).table.query(
            "PartitionKey lt @bucket",
            {"bucket": bucket_of(now)},
            select=["Due", "Subscription", "ResourceGroup", "Collection"],
            page_size=min(limit, 1000),
        )
        for entity in found:
            due = as_datetime(entity.get("Due"))
            if due is None:  # a partition's waiting mark (store/due.py), no occurrence
                continue
            count += 1
            key = CollectionKey(
                entity.get("Subscription", ""), entity.get("ResourceGroup", ""), entity.get("Collection", "")
            )
            oldest[key] = min(due, oldest.get(key, due))
            if count >= limit:
                break
        if count >= limit:
            break
    return Overdue(count, min(oldest.values(), default=None), oldest)


def poison_depth(store: Store) -> int:
    """Approximate number of messages in the occurrence poison queue (ours and the host's)."""
    return int(store.queue.poison_client.get_queue_properties().approximate_message_count or 0)


def executor_backlog(store: Store, now: datetime, forget: bool = False) -> ExecutorBacklog:
    """The occurrence queue's message count, its front visible message's earliest due, and what the processes
    hold waiting as they last said (fresh reports only; `forget`: the older ones deleted): three requests."""
    queued = int(store.queue.client.get_queue_properties().approximate_message_count or 0)
    due = None
    for front in store.queue.client.peek_messages(max_messages=1):
        # Not ours: the executor poisons it when it comes, and it tells no due.
        with contextlib.suppress(MalformedMessage):
            due = OccurrenceBatch.from_json(front.content).due
    # Older than three periods: a process gone, or too busy to say (store/held.py).
    held_due, held = HeldReports(store.due.state).earliest(now, 3 * store.timings.held_report_every, forget)
    return ExecutorBacklog(queued, due, held_due, held)


def record_tick(store: Store, at: datetime, duration: float, tasks: int) -> TickObservation:
    """Observe the deployment after a tick and write the heartbeat; what was observed, for telemetry."""
    late = overdue(store, at)
    broken: list[Broken] = []
    try:
        if store.expectations is not None:
            broken = check(store.expectations, store.jobs, at)
            record(store.due.state, at, broken)
    except Exception:  # the heartbeat matters more: the next tick checks the expectations again
        log.warning("the expectations of success could not be checked or recorded", exc_info=True)
    executor: ExecutorBacklog | None = None
    try:
        executor = executor_backlog(store, at, forget=True)  # the tick deletes gone processes' reports
    except Exception:  # the heartbeat matters more: health reads the queue again when asked
        log.warning("the occurrence queue's backlog could not be read", exc_info=True)
    observation = TickObservation(
        at, late.count, poison_depth(store), late.oldest, late.oldest_by_collection, broken, executor
    )
    lateness = executor.lateness(at) if executor is not None else None
    store.due.state.upsert(
        {
            "PartitionKey": _PARTITION,
            "RowKey": _ROW,
            "LastTick": at,
            "DurationSeconds": float(duration),
            "Tasks": int(tasks),
            "Backlog": observation.backlog,
            "PoisonDepth": observation.poison_depth,
            **({"QueuedMessages": executor.queued} if executor is not None else {}),
            **({"ExecutorLateSeconds": lateness.total_seconds()} if lateness is not None else {}),
        }
    )
    return observation


def snapshot(store: Store, now: datetime, host_started: datetime | None = None) -> Snapshot:
    """What the heartbeat row, the due index, the queues and the clock say at `now`, as seen by a host
    that began serving at `host_started` (runtime.py; None: not known, no host is spared its first tick)."""
    entity = store.due.state.get(_PARTITION, _ROW) or {}
    duration = entity.get("DurationSeconds")
    late = overdue(store, now)
    return Snapshot(
        now=now,
        last_tick=as_datetime(entity.get("LastTick")),
        last_tick_duration=float(duration) if isinstance(duration, int | float) else None,
        last_tick_tasks=as_int(entity.get("Tasks")) if "Tasks" in entity else None,
        backlog=late.count,
        poison_depth=poison_depth(store),
        oldest_overdue=late.oldest,
        watermark=store.due.watermark(),
        clock_skew=store.due.state.clock_skew(),
        silence=recorded(store.due.state),
        host_started=host_started,
        executor=executor_backlog(store, now),
        executor_behind_after=store.timings.executor_behind_after,
    )


def problems(found: Snapshot) -> list[str]:
    """What is wrong, one sentence each, in the order an operator should look at it (empty: healthy)."""
    said: list[str] = []
    since = found.since_last_tick
    interval = int(HEARTBEAT_INTERVAL.total_seconds())
    if since is None:
        said.append("the dispatcher has never ticked")
    elif since > BEHIND_AFTER:
        said.append(f"the dispatcher last ticked {since.total_seconds():.0f} s ago (it ticks every {interval} s)")
    age = found.oldest_overdue_age
    if found.backlog:
        oldest = f", the oldest {age.total_seconds():.0f} s overdue" if age is not None else ""
        said.append(f"{found.backlog}{'+' if found.backlog >= BACKLOG_LIMIT else ''} occurrence(s) are overdue{oldest}")
    late = found.executor_lateness
    if late is not None and found.executor_behind:
        held = f", {found.executor.held} batch(es) held waiting by the hosts" if found.executor.held else ""
        waiting = f"{found.executor.queued} message(s) queued{held}"
        said.append(f"the executor is behind by {late.total_seconds():.0f} s ({waiting})")
    if found.poison_depth:
        said.append(f"{found.poison_depth} message(s) are in the poison queue")
    if found.clock_skew is not None and abs(found.clock_skew) > CLOCK_SKEW_LIMIT:
        said.append(f"the host's clock is {found.clock_skew.total_seconds():+.1f} s off storage's")
    return said
