"""A backlog runs a few batches at a time (executor/catch_up.py): batches that arrive more than `catch_up_after` past
their second wait for one of the process's `catch_up_batches` places, which a late batch gives back when its
attempts are recorded; batches in time never wait.
In-process on the memory store and a ManualClock, the batches on one event loop (as a worker runs them), against a
real local HTTP target that holds every request until the test lets it answer."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest

from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import RUN, runtime_in_memory

STEPS = 400  # clock steps of STEP (each after RUN real seconds) for what the executor does once something moved
QUIET = 50  # steps in which a batch that waits must not reach the target
STEP = 0.01  # seconds: the executor's gathering windows (50 ms) pass in a few
WIDTH = 2


@pytest.fixture
def rt(clock: ManualClock) -> Iterator[Runtime]:
    with runtime_in_memory(clock, catch_up_batches=WIDTH) as runtime:
        yield runtime


def until(clock: ManualClock, condition: Callable[[], bool], steps: int = STEPS) -> bool:
    """Whether `condition` came true while the clock moved `steps` steps."""
    for _ in range(steps):
        if condition():
            return True
        clock.advance(STEP)
        threading.Event().wait(RUN)
    return condition()


@pytest.fixture
def answer() -> threading.Event:
    return threading.Event()


@pytest.fixture
def target(answer: threading.Event) -> Iterator[Server]:
    """Records each request as it arrives, and answers 200 once `answer` is set."""

    def held(_: Hit) -> tuple[int, dict[str, str], bytes]:
        answer.wait(30)
        return 200, {}, b""

    server = serve(held)
    yield server
    answer.set()
    server.close()


def _batches(rt: Runtime, target: Server, names: list[str], due: datetime) -> list[OccurrenceBatch]:
    make_collection(rt, "P20Premium")
    tomorrow = (due + timedelta(days=1)).replace(microsecond=0).isoformat()
    batches = []
    for name in names:
        put_job(rt, name, {"startTime": tomorrow, "action": http(f"{target.url}/{name}")})
        job = job_status(rt, name)
        batches.append(OccurrenceBatch((OccurrenceMessage(job.key, due, due, generation=job.generation),)))
    return batches


def _run_together(rt: Runtime, batches: list[OccurrenceBatch]) -> threading.Thread:
    """The batches delivered to one worker, one after the other, on one event loop."""

    async def deliver() -> None:
        runs = []
        for n, batch in enumerate(batches):
            runs.append(asyncio.ensure_future(rt.executor.run_batch(batch, f"delivery-{n}")))
            await asyncio.sleep(0.05)  # in this order
        await asyncio.gather(*runs)

    thread = threading.Thread(target=asyncio.run, args=(deliver(),), daemon=True)
    thread.start()
    return thread


def _paths(target: Server) -> list[str]:
    return [hit.path for hit in target.hits]


def test_late_batches_beyond_the_places_wait_for_one_to_be_recorded(
    rt: Runtime, clock: ManualClock, target: Server, answer: threading.Event
) -> None:
    late = clock.now().replace(microsecond=0) - timedelta(seconds=10)
    thread = _run_together(rt, _batches(rt, target, ["first", "second", "third"], late))

    assert until(clock, lambda: sorted(_paths(target)) == ["/first", "/second"]), _paths(target)
    assert not until(clock, lambda: len(target.hits) > WIDTH, QUIET), "a third late batch went out beside two"
    answer.set()
    assert until(clock, lambda: sorted(_paths(target)) == ["/first", "/second", "/third"]), _paths(target)
    assert until(clock, lambda: not thread.is_alive()), "the batches were not recorded"


def test_batches_in_time_do_not_wait_for_a_place(
    rt: Runtime, clock: ManualClock, target: Server, answer: threading.Event
) -> None:
    due = clock.now().replace(microsecond=0) + timedelta(seconds=1)
    thread = _run_together(rt, _batches(rt, target, ["one", "two", "three"], due))

    assert until(clock, lambda: sorted(_paths(target)) == ["/one", "/three", "/two"]), _paths(target)
    answer.set()
    assert until(clock, lambda: not thread.is_alive()), "the batches were not recorded"
