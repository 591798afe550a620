"""The process's threads (shared/threads.py): one pool, shared out in lanes that bound their calls, keep them in
order and never block a submit; lanes that wait on each other finish with every lane full; a closed runtime leaves
no thread of its lanes or renewers running; and no other pool is built in shared/."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future, wait
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.memory import MemoryStorage
from shared.store.queues import ShardTask
from shared.threads import CASCADE, LANES, LIMITS_DEFERRAL, WAITS_ON, Threads

SHARED = Path(__file__).resolve().parents[1] / "shared"


class _Tally:
    """The calls running at once, and the most there ever were."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.started: list[int] = []

    def enter(self, index: int) -> int:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.started.append(index)
            return self.now

    def leave(self) -> None:
        with self._lock:
            self.now -= 1


def _until(condition: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def threads() -> Iterator[Threads]:
    made = Threads()
    yield made
    made.close()


def test_a_lane_runs_at_most_its_size_at_once_in_the_order_submitted_and_its_submit_never_blocks(
    threads: Threads,
) -> None:
    lane = threads.lane(LIMITS_DEFERRAL)
    tally, release = _Tally(), threading.Event()

    def held(index: int) -> int:
        tally.enter(index)
        release.wait(10)
        tally.leave()
        return index

    started = time.monotonic()
    futures = [lane.submit(held, i) for i in range(20)]
    assert time.monotonic() - started < 1.0  # nothing waited for a call to end (each waits 10 s unless released)
    assert _until(lambda: tally.now == lane.size, within=5)
    time.sleep(0.2)  # room for a call beyond the size to start, were one admitted
    assert tally.now == lane.size == LANES[LIMITS_DEFERRAL].size
    release.set()
    assert [future.result(timeout=10) for future in futures] == list(range(20))
    assert tally.peak == lane.size
    assert tally.started == list(range(20))  # first in, first started


def test_a_share_bounds_one_callers_calls_within_its_lane(threads: Threads) -> None:
    share, tally = threads.share(CASCADE), _Tally()

    def call(index: int) -> None:
        tally.enter(index)
        time.sleep(0.02)
        tally.leave()

    list(share.map(call, range(40)))
    assert tally.peak == LANES[CASCADE].per_call


def test_a_lane_serves_the_event_loop_as_a_pool_would(threads: Threads) -> None:
    async def both() -> list[str]:
        loop = asyncio.get_running_loop()
        calls = [loop.run_in_executor(threads.lane(LIMITS_DEFERRAL), lambda i=i: f"call {i}") for i in range(5)]
        return list(await asyncio.gather(*calls))

    assert asyncio.run(both()) == [f"call {i}" for i in range(5)]


def test_the_lanes_wait_on_each_other_without_a_cycle() -> None:
    def reaches(start: str, seen: tuple[str, ...]) -> bool:
        return any(nxt in seen or reaches(nxt, (*seen, nxt)) for nxt in WAITS_ON.get(start, ()))

    assert set(WAITS_ON) | {lane for lanes in WAITS_ON.values() for lane in lanes} <= set(LANES)
    assert [lane for lane in LANES if reaches(lane, (lane,))] == []


def test_lanes_that_wait_on_each_other_all_finish_with_every_lane_full(threads: Threads) -> None:
    """Every lane takes its size of calls at once; a call of a lane that waits on others (WAITS_ON) submits a call
    to each of them and waits for it, behind that lane's own full share. No call ends before every lane is full
    (as many calls running as the lanes' sizes add up to): a pool with fewer threads would never get there, and
    nothing would finish."""
    total = sum(spec.size for spec in LANES.values())
    running = _Tally()
    full = threading.Event()

    def call(name: str | None, index: int) -> None:
        if running.enter(index) == total:
            full.set()
        nested = [threads.lane(inner).submit(call, None, index) for inner in WAITS_ON.get(name or "", ())]
        assert full.wait(30), "not every lane's calls got a thread"
        for future in nested:
            future.result(timeout=30)
        running.leave()

    futures = [threads.lane(name).submit(call, name, i) for name, spec in LANES.items() for i in range(spec.size)]
    done, pending = wait(futures, timeout=60)
    assert not pending
    for future in done:
        future.result()
    assert full.is_set() and running.peak == total


def test_a_closed_threads_refuses_work_cancels_what_waits_and_ends_a_loop_whose_step_raised(threads: Threads) -> None:
    lane, release, passes = threads.lane(LIMITS_DEFERRAL), threading.Event(), []

    def step() -> None:
        passes.append(1)
        raise RuntimeError("a failing pass is logged; the loop runs on")

    threads.loop("failing", step, 0.02)
    assert _until(lambda: len(passes) >= 3, within=5)
    running = [lane.submit(release.wait, 10) for _ in range(lane.size)]
    waiting: Future[bool] = lane.submit(release.wait, 10)
    threading.Timer(0.5, release.set).start()  # the running calls end while close waits for them
    threads.close()
    assert waiting.cancelled()
    assert all(future.result(timeout=1) for future in running)
    with pytest.raises(RuntimeError):
        lane.submit(time.sleep, 0)
    assert _until(lambda: not threads.alive(), within=5)
    with pytest.raises(CancelledError):
        waiting.result()


def test_a_closed_runtime_leaves_no_thread_of_its_lanes_or_renewers_running(
    settings: Settings, memory_storage: MemoryStorage
) -> None:
    rt = Runtime.create(settings, storage=memory_storage)
    prefix = rt.threads.name
    now = datetime.now(UTC)
    message = OccurrenceMessage(JobKey("sub", "rg", "jc", "job"), now, now)
    guard = rt.executor.guards.open(OccurrenceBatch((message,)))  # starts the attempts' renewer
    watch = rt.dispatcher.watchdogs.open(ShardTask("202603011200", 0))  # and the dispatch tasks'
    list(rt.threads.share(CASCADE).map(lambda i: i, range(20)))  # and some of the pool's threads
    names = {thread.name for thread in threading.enumerate()}
    assert {f"{prefix}-attempt-renewer", f"{prefix}-dispatch-renewer"} <= names
    assert any(name.startswith(f"{prefix}_") for name in names)  # a pool thread

    rt.close()
    poll = rt.store.timings.renewer_poll.total_seconds()
    # Longer than a renewer's poll: a loop that only noticed its stop at its next pass would have ended by then.
    assert _until(lambda: not [t for t in threading.enumerate() if t.name.startswith(prefix)], within=4 * poll + 2)
    assert rt.threads.alive() == []
    del guard, watch


def test_no_module_of_shared_builds_a_thread_pool_of_its_own() -> None:
    places = [
        f"{path.relative_to(SHARED)}:{number}"
        for path in sorted(SHARED.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "ThreadPoolExecutor(" in line
    ]
    assert len(places) <= 2, places
    assert all(place.startswith("threads.py:") for place in places), places
