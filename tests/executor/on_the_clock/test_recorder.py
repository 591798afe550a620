"""The recorder (shared/executor/recorder.py): each attempt is recorded moments after its action answers, whatever
its batch siblings still do (however many of them are in flight: more than the executor has threads), and a
window's jobs go in one request per collection, alone when another write changed one of them meanwhile.

In-process on the memory store and a ManualClock (tests/support/manual_time.py), against real local HTTP targets:
the recorder's window and the wait for the batch's second are ours, so the clock moves in steps while a batch runs,
and the times measured are the clock's. The slow sibling's target holds its answer until the test releases it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.manual_clock import ManualClock
from shared.model import JobExecutionStatus
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store import read_modify_write
from shared.threads import ATTEMPT, LANES
from tests.executor.peers.gate import Gate
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, history, http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock, step_until

FAST = [f"fast{i}" for i in range(8)]
STEP = 0.05  # clock seconds per step: a quarter of the recorder's window


@dataclass
class Target:
    """A local HTTP target answering at once, but for `/slow`, held until `release()`."""

    server: Server
    slow: threading.Event

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def hits(self) -> list[Hit]:
        return self.server.hits

    def release(self) -> None:
        self.slow.set()


@pytest.fixture
def target() -> Iterator[Target]:
    slow = threading.Event()

    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.path.endswith("/slow"):
            slow.wait(30)  # answers once released
        return 200, {}, b"ok"

    server = serve(respond)
    yield Target(server, slow)
    slow.set()
    server.close()


def batch_of(rt: Runtime, names: list[str], due: datetime) -> OccurrenceBatch:
    items = []
    for name in names:
        job = job_status(rt, name)
        items.append(OccurrenceMessage(job.key, due, due, generation=job.generation))
    return OccurrenceBatch(tuple(items))


def tomorrow(rt: Runtime) -> str:
    return (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()


def test_what_answered_is_recorded_within_a_second_while_a_sibling_of_its_batch_still_runs(
    rt: Runtime, clock: ManualClock, target: Target
) -> None:
    make_collection(rt)
    for name in [*FAST, "slow"]:
        put_job(rt, name, {"startTime": tomorrow(rt), "action": http(f"{target.url}/{name}")})
    due = clock.now() + timedelta(seconds=1)
    run = threading.Thread(target=rt.executor.run, args=(batch_of(rt, [*FAST, "slow"], due),))
    run.start()
    try:
        step_until(clock, lambda: len(target.hits) == len(FAST) + 1, STEP, 1000)
        answered = clock.monotonic()  # every fast target answered at once; the slow one holds until released
        step_until(  # two seconds of the clock at most: ten times the recorder's window
            clock,
            lambda: (
                clock.monotonic() - answered >= 2 or all(job_status(rt, name).execution_count == 1 for name in FAST)
            ),
            STEP,
            1000,
        )
        recorded = clock.monotonic() - answered
        assert run.is_alive(), "the slow sibling is still running"
        assert all(job_status(rt, name).execution_count == 1 for name in FAST)
        assert recorded < 1.5, recorded  # well inside the bound, not after the slow one
        assert job_status(rt, "slow").execution_count == 0
    finally:
        target.release()
        step_until(clock, lambda: not run.is_alive(), STEP, 1000)
    assert job_status(rt, "slow").execution_count == 1
    for name in [*FAST, "slow"]:
        assert [e.status for e in history(rt, name)] == [JobExecutionStatus.COMPLETED]


def test_a_job_changed_while_its_action_ran_is_recorded_alone_and_its_collection_mates_with_it(
    rt: Runtime, clock: ManualClock
) -> None:
    make_collection(rt)

    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.path.endswith("/fast3"):  # another write lands on this job while its action runs: a new ETag
            key = JobKey(SUB, RG, JC, "fast3")
            read_modify_write(
                lambda: rt.store.jobs.get(key),
                lambda job: job,
                lambda job, _: rt.store.jobs.replace(job),
                attempts=3,
            )
        return 200, {}, b"ok"

    server = serve(respond)
    try:
        for name in FAST:
            put_job(rt, name, {"startTime": tomorrow(rt), "action": http(f"{server.url}/{name}")})
        batch = batch_of(rt, FAST, clock.now() + timedelta(seconds=1))
        on_the_clock(clock, lambda: rt.executor.run(batch))
    finally:
        server.close()
    assert len(server.hits) == len(FAST)
    for name in FAST:  # counted once each, the changed one included
        job = job_status(rt, name)
        assert job.execution_count == 1 and len(job.recent_claims) == 1, name
        assert [e.status for e in history(rt, name)] == [JobExecutionStatus.COMPLETED]


def test_a_batch_keeps_more_actions_in_flight_than_the_executor_has_threads_and_records_each_as_it_answers(
    rt: Runtime, clock: ManualClock, target: Target
) -> None:
    """Actions are coroutines (bounded by the action limits, not by the executor's pool) and each attempt is still
    recorded as its own action answers: the fast one is durable while the held ones are all in flight at once."""
    make_collection(rt, "P20Premium")
    held = [f"held{i:02}" for i in range(LANES[ATTEMPT].size + 16)]
    gate = Gate(hold_at_most=120)  # answers nothing until released
    try:
        for name in held:
            put_job(rt, name, {"startTime": tomorrow(rt), "action": http(f"{gate.url}/{name}")})
        put_job(rt, "fast", {"startTime": tomorrow(rt), "action": http(f"{target.url}/fast")})
        batch = batch_of(rt, [*held, "fast"], clock.now() + timedelta(seconds=1))
        run = threading.Thread(target=rt.executor.run, args=(batch,))
        run.start()
        try:
            step_until(clock, lambda: gate.held == len(held), STEP, 1000)  # more at once than the lane's threads
            step_until(clock, lambda: job_status(rt, "fast").execution_count >= 1, STEP, 1000)
            assert job_status(rt, "fast").execution_count == 1  # recorded while its siblings are held
            assert gate.held == len(held) and all(job_status(rt, n).execution_count == 0 for n in held[:3])
        finally:
            gate.release()
            step_until(clock, lambda: not run.is_alive(), STEP, 1000)
    finally:
        gate.close()
    assert gate.most_at_once == len(held) and gate.answered == len(held)
    for name in [*held, "fast"]:
        job = job_status(rt, name)
        assert job.execution_count == 1 and len(job.recent_claims) == 1, name
