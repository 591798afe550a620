"""Delays beyond the queue's 7-day visibility limit: the executor re-sends an early message (a hop) until due.

The real queue cannot be fast-forwarded, so the test plays the queue's deliveries: at each hop it hands
the executor the message it re-sent, at the instant the queue would make it visible (the ManualClock).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from shared.model import JobHistoryActionName
from shared.occurrence import OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.queues import MAX_VISIBILITY
from tests.executor.peers.servers import serve
from tests.executor.support import fixed, history, job_status, make_collection, put_job, queued
from tests.support.clock import ManualClock


def test_a_retry_17_months_out_hops_through_the_queue_and_runs_on_time(settings: Settings) -> None:
    target = serve(lambda hit: (500, {}, b"down"))
    try:
        clock = ManualClock(datetime.now(UTC).replace(microsecond=0))
        rt = Runtime.create(settings, clock)
        make_collection(rt)
        delay = timedelta(days=520)
        put_job(
            rt,
            "patient",
            {"action": {"type": "Http", "request": {"uri": target.url, "method": "GET"}}},
            retry=fixed(delay.total_seconds(), 1),
        )
        [first] = list(rt.store.queue.client.receive_messages())
        rt.executor.handle(first.content)  # attempt 0 fails; the retry is due in 520 days
        rt.store.queue.client.delete_message(first)
        assert len(target.hits) == 1 and queued(rt) == 1

        retry = OccurrenceMessage.from_json(first.content).retry(clock.now() + delay)
        hops = 0
        while len(target.hits) == 1 and hops < 100:
            clock.advance(min(MAX_VISIBILITY, retry.due - clock.now()))  # the queue shows it at its visibility
            rt.executor.handle(retry.to_json())
            hops += 1
            assert len(target.hits) == (2 if clock.now() == retry.due else 1)  # early deliveries re-send, not run
        assert hops == -(-delay // MAX_VISIBILITY)  # ceil: 75 deliveries, the last one on time
        assert len(target.hits) == 2 and target.hits[1].headers["x-ms-scheduler-attempt"] == "2"
        # every early delivery re-sent one message; the last re-send, due within 7 days, came after its watchdog
        # and its backstop
        assert queued(rt) == 1 + hops - 1 + 2
        newest = history(rt, "patient")[0]
        assert (newest.action_name, newest.retry_count, newest.expected_execution_time) == (
            JobHistoryActionName.MAIN_ACTION,
            1,
            retry.due,
        )
        assert job_status(rt, "patient").faulted_count == 1
    finally:
        target.close()


def test_a_message_a_moment_early_waits_for_its_second(settings: Settings, http_target) -> None:
    rt = Runtime.create(settings)
    make_collection(rt)
    job = put_job(
        rt,
        "precise",
        {
            "startTime": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
            "action": {"type": "Http", "request": {"uri": http_target.url, "method": "GET"}},
        },
    )
    due = datetime.now(UTC) + timedelta(seconds=1.5)
    started = time.monotonic()
    rt.executor.handle(OccurrenceMessage(job.key, due, due, generation=job.generation).to_json())
    assert 1.2 < time.monotonic() - started < 3
    assert http_target.requests[0].at >= due
