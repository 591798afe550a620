"""The recorder (shared/executor/recorder.py): each attempt is recorded moments after its action answers, whatever
its batch siblings still do, and a window's jobs go in one request per collection, one by one when another write
changed one of them meanwhile.

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
