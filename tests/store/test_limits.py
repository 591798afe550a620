"""The cross-instance limits of issue 27 against a real Azurite (store/limits.py and store/overlap.py's rows, taken
under their ETag by executor/limit_slots.py and executor/overlap_marker.py): several "instances" (stores of their
own over the same tables) race for one collection's concurrency gate, one host's pacer and one job's overlap
marker, and the limits hold: never more slots held than the limit, every request a slot of its own 1/rate apart,
one occurrence running under Skip."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.executor import limit_slots, overlap_marker
from shared.jobstate import SlotRequest, Turn
from shared.jobstate.concurrency import Acquired, GateState, Lease, Waiter
from shared.keys import CollectionKey, JobKey
from shared.model import JobProperties, OverlapPolicy
from shared.occurrence import Trigger, execution_id
from shared.records import JobRecord, OccurrenceRef, OverlapMarker, RunningOccurrence, WaitingOccurrence
from shared.settings import Settings
from shared.store import Store
from shared.store.limits import gate_entity, gate_state

NOW = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
COLLECTION = CollectionKey("sub", "rg", "limited")
INSTANCES = 3


@pytest.fixture
def stores(settings: Settings) -> list[Store]:
    """One store per instance, each with its own clients, over the same tables."""
    made = [Store.from_settings(settings) for _ in range(INSTANCES)]
    made[0].ensure_ready(NOW)
    return made


def _acquire(store: Store, limit: int, requests: list[SlotRequest], now: datetime) -> Acquired:
    """Slots for `requests` at the collection's gate, as an executor of `store` asks for them."""
    assert store.gates is not None
    return limit_slots.settle(store.gates, store.timings, COLLECTION, limit, (), requests, now)


def test_the_gate_never_lets_more_than_the_limit_in_across_instances(stores: list[Store]) -> None:
    limit, per_thread = 4, 6
    lock = threading.Lock()
    in_flight = most = granted_total = 0

    def worker(store: Store, name: str) -> None:
        nonlocal in_flight, most, granted_total
        gates = store.gates
        assert gates is not None
        for n in range(per_thread):
            holder = f"{name}-{n}"
            while True:
                done = _acquire(store, limit, [SlotRequest(holder, NOW)], datetime.now(UTC))
                if holder in done.granted:
                    break
                time.sleep(0.01)
            with lock:
                in_flight += 1
                granted_total += 1
                most = max(most, in_flight)
            time.sleep(0.005)
            with lock:
                in_flight -= 1
            limit_slots.release(gates, store.timings, COLLECTION, [holder], datetime.now(UTC))

    with ThreadPoolExecutor(INSTANCES * 3) as pool:
        futures = [pool.submit(worker, stores[i % INSTANCES], f"i{i}") for i in range(INSTANCES * 3)]
        for future in futures:
            future.result(timeout=120)
    assert granted_total == INSTANCES * 3 * per_thread
    assert 1 <= most <= limit
    gates = stores[0].gates
    assert gates is not None and gates.state(COLLECTION).held(datetime.now(UTC)) == ()


def test_a_crashed_instances_slots_come_back_and_the_line_is_kept(stores: list[Store]) -> None:
    first, second = stores[0], stores[1]
    assert _acquire(first, 1, [SlotRequest("crashed", NOW)], NOW).granted == ("crashed",)
    waits = _acquire(second, 1, [SlotRequest("next", NOW + timedelta(seconds=1))], NOW)
    assert waits.waiting == {"next": 1}
    lease = stores[0].timings.slot_lease
    later = NOW + lease + timedelta(seconds=1)  # the crashed instance never renewed nor released
    assert _acquire(second, 1, [SlotRequest("next", NOW)], later).granted == ("next",)
    assert second.gates is not None
    assert limit_slots.renew(second.gates, second.timings, COLLECTION, ["next", "crashed"], later, lease) == frozenset(
        {"crashed"}
    )


def test_a_full_gate_row_round_trips(stores: list[Store]) -> None:
    """A thousand leases and two thousand waiters: the row's JSON is split over properties under 64 KiB."""
    state = GateState(
        tuple(Lease(f"{n:08d}-4b5c-8d9e-aaaaaaaaaaaa|MainAction|0", NOW + timedelta(seconds=n)) for n in range(1000)),
        tuple(
            Waiter(f"{n:08d}-4b5c-8d9e-bbbbbbbbbbbb|MainAction|0", NOW - timedelta(seconds=n), NOW) for n in range(2000)
        ),
    )
    gates = stores[0].gates
    assert gates is not None
    gates.table.upsert({"PartitionKey": "gate", "RowKey": "full", **gate_entity(state)})
    stored = gates.table.get("gate", "full")
    assert gate_state(stored) == state


def test_the_pacer_hands_1000_distinct_slots_20_ms_apart_to_racing_instances(stores: list[Store]) -> None:
    sizes = [7, 50, 13, 100, 30] * 5  # 1,000 requests, asked for in 25 batches by three instances
    total = sum(sizes)
    assert total == 1000

    def reserve(index: int) -> list[datetime]:
        store = stores[index % INSTANCES]
        pacers = store.pacers
        assert pacers is not None
        return limit_slots.reserve(pacers, store.timings, COLLECTION, "api.example.com", sizes[index], 50, NOW)

    with ThreadPoolExecutor(6) as pool:
        batches = list(pool.map(reserve, range(len(sizes))))
    slots = sorted(s for batch in batches for s in batch)
    assert len(set(slots)) == total
    assert slots == [NOW + timedelta(milliseconds=20 * n) for n in range(total)]  # no gap, none shared
    assert all(batch == sorted(batch) for batch in batches)  # each batch in the order it asked
    pacers = stores[0].pacers
    assert pacers is not None and pacers.next_free(COLLECTION, "api.example.com") == NOW + timedelta(
        milliseconds=20 * total
    )


def _job(store: Store, policy: str) -> JobRecord:
    properties = JobProperties.model_validate(
        {
            "action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
            "recurrence": {"frequency": "Minute"},
            "overlapPolicy": policy,
        }
    )
    return store.jobs.insert(JobRecord(JobKey("sub", "rg", "limited", f"slow-{policy}"), properties, created_time=NOW))


def _ref(key: JobKey, at: datetime, overlap: OverlapPolicy | None = None) -> OccurrenceRef:
    return OccurrenceRef(execution_id(key, at, Trigger.SCHEDULE), at, "schedule", 0, overlap)


def test_the_overlap_marker_rides_on_the_job_row(stores: list[Store]) -> None:
    job = _job(stores[0], "BufferOne")
    marker = OverlapMarker(
        (RunningOccurrence(_ref(job.key, NOW, OverlapPolicy.ALLOW), NOW, NOW + timedelta(minutes=3)),),
        WaitingOccurrence(
            _ref(job.key, NOW + timedelta(minutes=1)), NOW + timedelta(minutes=1), NOW + timedelta(minutes=4)
        ),
    )
    written = stores[0].jobs.replace(replace(job, overlap=marker))
    assert stores[1].jobs.get(job.key) == written
    assert stores[1].jobs.get(job.key).overlap == marker  # type: ignore[union-attr]


def test_two_instances_starting_occurrences_of_a_skip_job_at_once_run_exactly_one(stores: list[Store]) -> None:
    job = _job(stores[0], "Skip")
    until = NOW + timedelta(minutes=3)
    occurrences = [NOW + timedelta(seconds=n) for n in range(INSTANCES * 2)]

    def begin(index: int) -> Turn:
        store = stores[index % INSTANCES]
        decision, _ = overlap_marker.begin(store.jobs, job.key, _ref(job.key, occurrences[index]), NOW, until)
        return decision.turn

    with ThreadPoolExecutor(len(occurrences)) as pool:
        turns = list(pool.map(begin, range(len(occurrences))))
    assert sorted(turns) == sorted([Turn.RUN] + [Turn.SKIP] * (len(occurrences) - 1))
    winner = occurrences[turns.index(Turn.RUN)]
    stored = stores[0].jobs.get(job.key)
    assert stored is not None and [r.ref.occurrence for r in stored.overlap.running] == [winner]
    ended, after = overlap_marker.end(stores[1].jobs, job.key, _ref(job.key, winner).execution_id, NOW, until)
    assert ended.released is None and after is not None and not after.overlap


def test_the_end_of_a_buffer_one_occurrence_releases_the_waiting_one(stores: list[Store]) -> None:
    job = _job(stores[0], "BufferOne")
    first, second = _ref(job.key, NOW), _ref(job.key, NOW + timedelta(minutes=1))
    until = NOW + timedelta(minutes=3)
    jobs = [store.jobs for store in stores]
    assert overlap_marker.begin(jobs[0], job.key, first, NOW, until)[0].turn == Turn.RUN
    assert overlap_marker.begin(jobs[1], job.key, second, NOW, until)[0].turn == Turn.BUFFER
    assert overlap_marker.extend(jobs[2], job.key, first.execution_id, NOW + timedelta(hours=1)) is not None
    ended, after = overlap_marker.end(jobs[2], job.key, first.execution_id, NOW + timedelta(minutes=2), until)
    assert ended.released == second
    assert after is not None and [r.ref for r in after.overlap.running] == [second]
    assert overlap_marker.begin(jobs[0], job.key, second, NOW + timedelta(minutes=2), until)[0].turn == Turn.RUN
