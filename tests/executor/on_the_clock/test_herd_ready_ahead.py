"""A herd gets ready ahead of its second and goes out at it (executor/batch.py `_ready_at`): the Http attempts of
one process due at the same second are admitted and connect `ready_each` per attempt ahead of it (at most
`ready_most`), and not before; their requests are written at the second, never before it, and their history starts
there. A herd that may not get ready ahead (jobs whose overlap is tracked) connects at its second. In-process
on the memory store and a ManualClock, against a real local HTTP target that counts the connections it accepts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from shared.manual_clock import ManualClock
from shared.model import OverlapPolicy
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.timings import Timings
from tests.executor.peers.servers import Server
from tests.executor.support import history, http, job_status, make_collection, put_job
from tests.support.manual_time import RUN, runtime_in_memory, until

HERD = 10
EACH = timedelta(seconds=0.1)  # so the herd gets ready 1 s ahead
MOST = timedelta(seconds=2)
TO_WAIT = 10.0  # real seconds for what the executor's threads and coroutines do once the clock moved


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    with runtime_in_memory(clock, timings=replace(Timings(), ready_each=EACH, ready_most=MOST)) as runtime:
        yield runtime


def _batch(rt: Runtime, names: list[str], due: datetime) -> OccurrenceBatch:
    jobs = [job_status(rt, name) for name in names]
    return OccurrenceBatch(tuple(OccurrenceMessage(j.key, due, due, generation=j.generation) for j in jobs))


def _move_to(clock: ManualClock, instant: datetime) -> None:
    """Move the clock to `instant` in steps, letting the executor run between them."""
    while clock.now() < instant:
        clock.advance(min(0.05, (instant - clock.now()).total_seconds()))
        threading.Event().wait(RUN)


def _run(rt: Runtime, batch: OccurrenceBatch) -> threading.Thread:
    thread = threading.Thread(target=rt.executor.run, args=(batch,), daemon=True)
    thread.start()
    return thread


def test_a_herd_connects_ahead_of_its_second_and_writes_its_requests_at_it(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt, "P20Premium")
    tomorrow = (clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    names = [f"herd{n}" for n in range(HERD)]
    for name in names:
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
    due = clock.now().replace(microsecond=0) + timedelta(seconds=4)
    lead = HERD * EACH
    thread = _run(rt, _batch(rt, names, due))

    _move_to(clock, due - lead - timedelta(seconds=0.2))
    assert not until(lambda: target.connections > 0, within=0.5), "connected before its lead"
    _move_to(clock, due - timedelta(seconds=0.3))
    assert until(lambda: target.connections == HERD, within=TO_WAIT), target.connections
    assert not until(lambda: len(target.hits) > 0, within=0.5), "a request written before its second"

    _move_to(clock, due)
    assert until(lambda: len(target.hits) == HERD, within=TO_WAIT), len(target.hits)
    _move_to(clock, due + timedelta(seconds=1))  # the recorder's window
    thread.join(TO_WAIT)
    assert not thread.is_alive()
    assert sorted(hit.path for hit in target.hits) == sorted(f"/{name}" for name in names)
    started = {history(rt, name)[0].start_time for name in names}
    assert started == {due}, started  # its history starts at the second, not when it got ready


def test_a_herd_of_tracked_jobs_connects_at_its_second(rt: Runtime, clock: ManualClock, target: Server) -> None:
    # A herd, so that were its attempts to get ready ahead they would connect 1 s before the second, well before
    # the look below (0.3 s before it).
    make_collection(rt, "P20Premium")
    tomorrow = (clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    names = [f"tracked{n}" for n in range(HERD)]
    for name in names:
        job = put_job(
            rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}"), "overlapPolicy": "Skip"}
        )
        assert job.properties.overlap_policy == OverlapPolicy.SKIP
    due = clock.now().replace(microsecond=0) + timedelta(seconds=4)
    thread = _run(rt, _batch(rt, names, due))

    _move_to(clock, due - timedelta(seconds=0.3))
    assert not until(lambda: target.connections > 0, within=1.0), "a tracked job's attempt connected ahead"
    _move_to(clock, due)
    assert until(lambda: len(target.hits) == HERD, within=TO_WAIT), len(target.hits)
    _move_to(clock, due + timedelta(seconds=1))
    thread.join(TO_WAIT)
    assert not thread.is_alive()
