"""Two traps other schedulers fell into, proven absent end to end: the API (in process), the real dispatcher, the real
occurrence queue (Azurite), the executor and a real local HTTP target on loopback.

1. A manual run stamped with the next scheduled instant, which then never ran. A job due at T (every minute or
   hourly) is run now (POST .../run) 2 s before T, recorded before the dispatcher's tick reads T from the due index;
   or exactly at T, beside T already queued. The run-now fires with an identity of its own (execution tag), T fires
   once, at T; the job counts two executions and moves on to T + its period, not past it; the ledger holds T
   (Schedule, Completed) and the run-now (RunNow) side by side; explaining T answers Ran, the run-now listed beside
   it (`manualRuns`) when it is at T, never standing for it. Nothing is left in the queue to fire either again.
2. An occurrence deferred at a limit that silently never fired that day. Four every-minute jobs due at one second,
   in a collection limited to one execution at a time (a target answering in 2 s) or to one request a second to the
   target's host: the target sees each occurrence once, the limit holding; each one's ledger entry is Completed,
   the ones that waited saying so (`waited`, `waitedFor`), nothing left Waiting nor queued. The last in line of
   the concurrency cap waits 6 s at least, past the 5 s after which its entry shows it Waiting (seen meanwhile).
   With the default timings the waits are spent in the executor (up to `concurrency_wait`, 15 s; a rate slot up to
   `early_hop`, 8 s); with short ones (injected: `concurrency_wait` 1 s; `early_visibility` 1 s, `early_hop` 1.5 s)
   the waiters are handed back to the queue (executor/deferrals.py), seen there, and still run.
   These run on the system clock: the limits reckon waits on the clock's `now` (slots, `waited`, the 5 s before an
   entry shows Waiting) and the queue its visibility in real seconds, so a hand-held `now` would freeze them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.storage.queue import QueueMessage

from shared import api
from shared.dispatcher import Dispatcher
from shared.model import PREVIEW_API_VERSION, WaitCause, parse_duration
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from shared.timings import Timings
from tests.conftest import HttpTarget
from tests.executor.peers.servers import Hit, Server, ok, serve
from tests.executor.support import QueueTrigger, queued
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
PATIENCE = 60.0  # seconds of real time for the executor and the recorder on a busy machine
MIN = timedelta(minutes=1)
PERIODS = {"Minute": MIN, "Hour": timedelta(hours=1)}
HERD = 4  # jobs due at one second behind one limit
HERD_LEAD = timedelta(seconds=8)  # how far ahead of its writing the herd is due
ANSWER = 2.0  # seconds the slow target takes to answer: the 4th of a herd limited to 1 at a time waits 6 s at least
RATE = 1  # requests a second to the target's host
SHORT_CONCURRENCY = Timings(concurrency_wait=timedelta(seconds=1))
SHORT_RATE = Timings(
    early_visibility=timedelta(seconds=1),
    herd_visibility=timedelta(seconds=1),
    early_hop=timedelta(seconds=1.5),
    ready_most=timedelta(seconds=0.5),
)


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def put_job(rt: Runtime, name: str, url: str, start: datetime, frequency: str = "Minute") -> None:
    properties = {
        "startTime": stamp(start),
        "recurrence": {"frequency": frequency, "interval": 1},
        "action": {"type": "Http", "request": {"uri": url, "method": "POST"}, "retryPolicy": {"retryType": "None"}},
    }
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=NEWER)
    assert answer.status == 201, answer.body


def status(rt: Runtime, name: str) -> dict[str, Any]:
    answer = call(rt, "Jobs_Get", "GET", name, query=NEWER)
    assert answer.status == 200, answer.body
    return dict(answer.body["properties"]["status"])


def ledger(rt: Runtime, name: str) -> list[dict[str, Any]]:
    """The job's ledger (the newer version's history), newest first."""
    answer = call(rt, "Jobs_ListJobHistory", "GET", name, query=NEWER)
    assert answer.status == 200, answer.body
    return [entry["properties"] for entry in answer.body["value"]]


def entry(rt: Runtime, name: str, instant: datetime, trigger: str) -> dict[str, Any] | None:
    found = [e for e in ledger(rt, name) if (e["occurrenceTime"], e["trigger"]) == (stamp(instant), trigger)]
    assert len(found) <= 1, found
    return found[0] if found else None


def done(rt: Runtime, name: str, instant: datetime, trigger: str = "Schedule") -> bool:
    found = entry(rt, name, instant, trigger)
    return found is not None and found["status"] not in ("Running", "Waiting")


def explain(rt: Runtime, name: str, instant: datetime) -> dict[str, Any]:
    """GET .../jobs/{job}/occurrences/{instant} (Jobs_GetOccurrence), as function_app.py builds the request."""
    path = f"/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections/{JC}/jobs/{name}"
    route = {"subscriptionId": SUB, "resourceGroupName": RG, "jobCollectionName": JC, "jobName": name}
    request = api.ApiRequest(
        "GET", f"http://127.0.0.1:7071{path}/occurrences/{stamp(instant)}", {**route, "instant": stamp(instant)}, NEWER
    )
    answer = api.handle("Jobs_GetOccurrence", request, rt)
    assert answer.status == 200, answer.body
    assert answer.body["occurrenceTime"] == stamp(instant)
    return dict(answer.body)


def hits_of(hits: list[Hit], name: str) -> list[Hit]:
    return [hit for hit in list(hits) if hit.headers["x-ms-scheduler-jobid"] == name]


def run_now(rt: Runtime) -> None:
    answer = call(rt, "Jobs_Run", "POST", "job")  # the 2016-03-01 call: run-now is no newer feature
    assert answer.status == 200, answer.body


def tag(hit: Hit) -> str:
    return hit.headers["x-ms-execution-tag"]


# -- 1. run-now beside the next occurrence ---------------------------------------------------------------------------


@pytest.mark.parametrize("frequency", list(PERIODS))
@pytest.mark.parametrize("early", [timedelta(seconds=2), timedelta(0)], ids=["2 s before T", "at T"])
def test_a_run_now_beside_the_next_occurrence_neither_consumes_nor_shifts_it(
    settings: Settings, clock: ManualClock, http_target: HttpTarget, frequency: str, early: timedelta
) -> None:
    rt = Runtime.create(settings, clock)
    try:
        make_collection(rt)
        t = clock.now().replace(second=0) + 3 * MIN  # beyond the API's own dispatch: the tick below queues it
        period = PERIODS[frequency]
        put_job(rt, "job", http_target.url, t, frequency)
        manual_at = t - early

        if early:  # the run-now first, recorded before the dispatcher's tick reads the due index
            clock.current = manual_at
            run_now(rt)
            drain(rt, PATIENCE, until=lambda: done(rt, "job", manual_at, "RunNow"))
            after_manual = status(rt, "job")
            assert (after_manual["nextExecutionTime"], after_manual["executionCount"]) == (stamp(t), 1)
            Dispatcher(rt.store, clock).tick()  # T from the due index, where the run-now must have left it
            clock.current = t
        else:  # T queued ahead by the tick, as it is at T; the run-now then queued beside it
            clock.current = t - timedelta(seconds=3)
            Dispatcher(rt.store, clock).tick()
            clock.current = t
            run_now(rt)
        drain(rt, PATIENCE, until=lambda: done(rt, "job", t) and done(rt, "job", manual_at, "RunNow"))
        assert queued(rt) == 0  # no message nor copy left to fire either again

        hits = hits_of(http_target.requests, "job")
        assert len(hits) == 2, hits
        assert {hit.headers["x-ms-scheduler-expected-execution-time"] for hit in hits} == {stamp(manual_at), stamp(t)}
        assert tag(hits[0]) != tag(hits[1])  # the run-now is an execution of its own, even at T

        entries = ledger(rt, "job")
        assert sorted((e["occurrenceTime"], e["trigger"]) for e in entries) == sorted(
            [(stamp(manual_at), "RunNow"), (stamp(t), "Schedule")]
        )
        ran = entry(rt, "job", t, "Schedule")
        assert ran is not None and "reason" not in ran
        assert (ran["status"], ran["attempts"], ran["startTime"]) == ("Completed", 1, stamp(t))  # at T
        run_now_entry = entry(rt, "job", manual_at, "RunNow")
        assert run_now_entry is not None and run_now_entry["status"] == "Completed"
        manual = run_now_entry["executionTag"]
        assert {ran["executionTag"], manual} == {tag(hit) for hit in hits}  # each the one the target saw, once

        final = status(rt, "job")
        assert (final["executionCount"], final["nextExecutionTime"]) == (2, stamp(t + period))

        explained = explain(rt, "job", t)
        assert (explained["verdict"], explained["reason"], explained["attempts"]) == ("Ran", "Schedule", 1)
        assert explained["isOccurrence"] and explained["nominal"]
        listed = {"trigger": "RunNow", "status": "Completed", "attempts": 1, "executionTag": manual}
        if early:
            assert "manualRuns" not in explained  # the run-now was not at T
            beside = explain(rt, "job", manual_at)  # its own instant: no occurrence, the run-now listed there
            assert (beside["verdict"], beside["nearest"]) == ("NotAnOccurrence", [stamp(t)])
            assert beside["manualRuns"] == [listed]
        else:
            assert explained["manualRuns"] == [listed]
    finally:
        rt.close()


# -- 2. occurrences deferred at a limit ------------------------------------------------------------------------------


class SeenTrigger(QueueTrigger):
    """The queue trigger as the host plays it (a thread per message), keeping every occurrence it handed over."""

    def __init__(self, rt: Runtime) -> None:
        self.seen: list[OccurrenceMessage] = []
        super().__init__(rt)

    def _handle(self, message: QueueMessage) -> None:
        self.seen.extend(OccurrenceBatch.from_json(message.content).items)
        super()._handle(message)


@contextmanager
def deployment(settings: Settings, timings: Timings | None) -> Iterator[tuple[Runtime, SeenTrigger]]:
    """A deployment on the system clock (with `timings` when given) and its queue trigger."""
    rt = Runtime.create(settings if timings is None else replace(settings, timings=timings))
    trigger = SeenTrigger(rt)
    try:
        yield rt, trigger
    finally:
        trigger.stop()
        rt.close()


def until(condition: Callable[[], bool], within: float = PATIENCE) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def ledgers(rt: Runtime, names: list[str]) -> dict[str, list[tuple[str, str, str | None]]]:
    """What each job's ledger says, for a failure's message."""
    return {name: [(e["occurrenceTime"], e["status"], e.get("reason")) for e in ledger(rt, name)] for name in names}


def herd_due_at_one_second(rt: Runtime, url: str, limits: dict[str, Any]) -> tuple[datetime, list[str]]:
    """A collection with `limits` (PATCH, newer api-version) and HERD every-minute jobs due at one second, a few
    seconds ahead: the API queues each itself (before the dispatcher's horizon, through its `dispatch`)."""
    make_collection(rt)
    answer = call(rt, "JobCollections_Patch", "PATCH", body={"properties": limits}, query=NEWER)
    assert answer.status == 200, answer.body
    # Ahead by more than four PUTs take on a busy machine: a job written after its start time would first be due a
    # period later, and the herd would not be one.
    t = datetime.now(UTC).replace(microsecond=0) + HERD_LEAD
    names = [f"job{n}" for n in range(HERD)]
    for name in names:
        put_job(rt, name, url, t)
    assert datetime.now(UTC) < t - timedelta(seconds=1), "the jobs took longer to write than the herd's lead"
    return t, names


def ran_once_each_saying_it_waited(
    rt: Runtime, trigger: SeenTrigger, server: Server, t: datetime, names: list[str], cause: WaitCause, again: bool
) -> tuple[list[float], list[timedelta]]:
    """Each occurrence fired once; its ledger entry (its only one) is Completed and says whether it waited and for
    what; nothing is left to fire; the last explained as Ran after its wait; and some were handed back to the queue
    to wait, or none (`again`). The arrivals at the target (seconds apart) and how long each waited, in order."""
    assert until(lambda: queued(rt) == 0, 15)  # no message nor copy left to fire any occurrence again
    hits = sorted(server.hits, key=lambda h: h.at)
    order = [hit.headers["x-ms-scheduler-jobid"] for hit in hits]
    assert sorted(order) == names, order  # each exactly once
    waits: dict[str, timedelta] = {}
    for name in names:
        entries = ledger(rt, name)
        assert [(e["occurrenceTime"], e["trigger"], e["status"]) for e in entries] == [
            (stamp(t), "Schedule", "Completed")
        ], entries
        found = entries[0]
        assert found["attempts"] == 1 and "reason" not in found and found.get("waitedFor") in (None, cause.value)
        assert ("waited" in found) == ("waitedFor" in found), found
        waits[name] = parse_duration(found.get("waited", "PT0S"))
    last = explain(rt, order[-1], t)
    assert (last["verdict"], last["reason"], last["waitedFor"]) == ("Ran", "Schedule", cause.value), last
    assert parse_duration(last["waited"]) == waits[order[-1]] > timedelta(0)
    queued_again = [item for item in list(trigger.seen) if item.waited_for is not None]
    assert {item.waited_for for item in queued_again} == ({cause} if again else set()), queued_again
    gaps = [(b.at - a.at).total_seconds() for a, b in zip(hits, hits[1:], strict=False)]
    return gaps, [waits[name] for name in order]


@pytest.mark.parametrize("timings", [None, SHORT_CONCURRENCY], ids=["waits in the executor", "queued again"])
def test_occurrences_deferred_at_a_concurrency_cap_all_run_and_say_they_waited(
    settings: Settings, timings: Timings | None
) -> None:
    slow = serve(ok, delay=ANSWER)
    try:
        with deployment(settings, timings) as (rt, trigger):
            t, names = herd_due_at_one_second(rt, slow.url, {"maxConcurrentExecutions": 1})

            def shown_waiting() -> bool:
                entries = (e for name in names for e in ledger(rt, name))
                return any((e["status"], e.get("reason")) == ("Waiting", "WaitingForConcurrency") for e in entries)

            # The last in line waits 3 answers (6 s) at least: past the 5 s after which its entry shows it Waiting.
            assert until(shown_waiting), ledgers(rt, names)
            assert until(lambda: all(done(rt, name, t) for name in names)), ledgers(rt, names)
            gaps, waits = ran_once_each_saying_it_waited(
                rt, trigger, slow, t, names, WaitCause.CONCURRENCY, again=timings is not None
            )
    finally:
        slow.close()
    # One at a time: each request came after the one before it was answered.
    assert min(gaps) >= ANSWER, gaps
    assert all(w >= n * timedelta(seconds=ANSWER) for n, w in enumerate(waits)), waits


@pytest.mark.parametrize("timings", [None, SHORT_RATE], ids=["paced in the executor", "queued again"])
def test_occurrences_deferred_at_a_rate_limit_all_run_and_say_they_waited(
    settings: Settings, http_target: HttpTarget, timings: Timings | None
) -> None:
    with deployment(settings, timings) as (rt, trigger):
        limits = {"targetRateLimits": [{"host": "127.0.0.1", "requestsPerSecond": RATE}]}
        t, names = herd_due_at_one_second(rt, http_target.url, limits)
        assert until(lambda: all(done(rt, name, t) for name in names)), ledgers(rt, names)
        # Queued again: the slots further than early_hop (1.5 s) ahead, the 3rd's and the 4th's.
        gaps, waits = ran_once_each_saying_it_waited(
            rt, trigger, http_target.server, t, names, WaitCause.RATE_LIMIT, again=timings is not None
        )
    # Paced: slots 1 / (0.97 x RATE) s apart, less what a busy machine's wake-ups and the target's clock jitter.
    assert min(gaps) > 0.5 / RATE and sum(gaps) > 2.5 / RATE, gaps
    assert all(w > timedelta(0) for w in waits[1:]), waits  # every one after the first waited for its slot
    assert waits[-1] > timedelta(seconds=2.5 / RATE), waits
