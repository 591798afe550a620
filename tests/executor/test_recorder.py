"""The recorder (shared/executor/recorder.py): each attempt is recorded moments after its action answers, whatever
its batch siblings still do (however many of them are in flight: more than the executor has threads), and a
window's jobs go in one request per collection, alone when another write changed one of them meanwhile.

In-process on the session's Azurite, against real local HTTP targets."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.keys import JobKey
from shared.model import JobExecutionStatus
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store import read_modify_write
from shared.threads import ATTEMPT, LANES
from tests.executor.peers.gate import Gate
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, history, http, job_status, make_collection, put_job

FAST = [f"fast{i}" for i in range(8)]


@pytest.fixture
def target() -> Iterator[Server]:
    slow = threading.Event()

    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.path.endswith("/slow"):
            slow.wait(4)  # answers 4 s after it was called
        return 200, {}, b"ok"

    server = serve(respond)
    yield server
    slow.set()
    server.close()


def batch_of(rt: Runtime, names: list[str], due: datetime) -> OccurrenceBatch:
    items = []
    for name in names:
        job = job_status(rt, name)
        items.append(OccurrenceMessage(job.key, due, due, generation=job.generation))
    return OccurrenceBatch(tuple(items))


def tomorrow() -> str:
    return (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()


def test_what_answered_is_recorded_within_a_second_while_a_sibling_of_its_batch_still_runs(
    runtime: Runtime, target: Server
) -> None:
    make_collection(runtime)
    for name in [*FAST, "slow"]:
        put_job(runtime, name, {"startTime": tomorrow(), "action": http(f"{target.url}/{name}")})
    due = datetime.now(UTC) + timedelta(seconds=1)
    run = threading.Thread(target=runtime.executor.run, args=(batch_of(runtime, [*FAST, "slow"], due),))
    run.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(target.hits) < len(FAST) + 1:
            time.sleep(0.02)
        answered = time.monotonic()  # every fast target answered at once; the slow one holds for 4 s
        while time.monotonic() - answered < 2 and not all(
            job_status(runtime, name).execution_count == 1 for name in FAST
        ):
            time.sleep(0.05)
        recorded = time.monotonic() - answered
        assert run.is_alive(), "the slow sibling is still running"
        assert all(job_status(runtime, name).execution_count == 1 for name in FAST)
        assert recorded < 1.5, recorded  # well inside the bound of a busy machine, not after the slow one
        assert job_status(runtime, "slow").execution_count == 0
    finally:
        run.join(15)
    assert job_status(runtime, "slow").execution_count == 1
    for name in [*FAST, "slow"]:
        assert [e.status for e in history(runtime, name)] == [JobExecutionStatus.COMPLETED]


def test_a_job_changed_while_its_action_ran_is_recorded_alone_and_its_collection_mates_with_it(
    runtime: Runtime,
) -> None:
    make_collection(runtime)

    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        if hit.path.endswith("/fast3"):  # another write lands on this job while its action runs: a new ETag
            key = JobKey(SUB, RG, JC, "fast3")
            read_modify_write(
                lambda: runtime.store.jobs.get(key),
                lambda job: job,
                lambda job, _: runtime.store.jobs.replace(job),
                attempts=3,
            )
        return 200, {}, b"ok"

    server = serve(respond)
    try:
        for name in FAST:
            put_job(runtime, name, {"startTime": tomorrow(), "action": http(f"{server.url}/{name}")})
        runtime.executor.run(batch_of(runtime, FAST, datetime.now(UTC) + timedelta(seconds=1)))
    finally:
        server.close()
    assert len(server.hits) == len(FAST)
    for name in FAST:  # counted once each, the changed one included
        job = job_status(runtime, name)
        assert job.execution_count == 1 and len(job.recent_claims) == 1, name
        assert [e.status for e in history(runtime, name)] == [JobExecutionStatus.COMPLETED]


def test_a_batch_keeps_more_actions_in_flight_than_the_executor_has_threads_and_records_each_as_it_answers(
    runtime: Runtime, target: Server
) -> None:
    """Actions are coroutines (bounded by the action limits, not by the executor's pool) and each attempt is still
    recorded as its own action answers: the fast one is durable while the held ones are all in flight at once."""
    make_collection(runtime, "P20Premium")
    held = [f"held{i:02}" for i in range(LANES[ATTEMPT].size + 16)]
    gate = Gate(hold_at_most=120)  # answers nothing until released
    try:
        for name in held:
            put_job(runtime, name, {"startTime": tomorrow(), "action": http(f"{gate.url}/{name}")})
        put_job(runtime, "fast", {"startTime": tomorrow(), "action": http(f"{target.url}/fast")})
        batch = batch_of(runtime, [*held, "fast"], datetime.now(UTC) + timedelta(seconds=1))
        run = threading.Thread(target=runtime.executor.run, args=(batch,))
        run.start()
        try:
            assert gate.wait_held(len(held), timeout=60), gate.held  # more at once than the attempt lane's threads
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and job_status(runtime, "fast").execution_count < 1:
                time.sleep(0.05)
            assert job_status(runtime, "fast").execution_count == 1  # recorded while its siblings are held
            assert gate.held == len(held) and all(job_status(runtime, n).execution_count == 0 for n in held[:3])
        finally:
            gate.release()
            run.join(60)
    finally:
        gate.close()
    assert gate.most_at_once == len(held) and gate.answered == len(held)
    for name in [*held, "fast"]:
        job = job_status(runtime, name)
        assert job.execution_count == 1 and len(job.recent_claims) == 1, name
