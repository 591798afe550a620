"""The occurrences preview (GET .../occurrences, newer api-version) equals what the real dispatcher queues, over
random jobs and a simulated month, through the API and the store (tests/jobstate/test_preview.py checks many
more jobs against the dispatcher's pure rule)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared.dispatcher import Dispatcher
from shared.keys import JobKey
from shared.model import PREVIEW_API_VERSION, to_utc
from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from tests.jobstate.test_preview import T0, jobs
from tests.support.clock import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
COUNT = 40


class Recording:
    """The occurrence queue's send, recorded (delayed messages cannot be peeked until they are visible)."""

    def __init__(self, rt: Runtime) -> None:
        self.sent: list[str] = []
        original = rt.store.queue.send

        def send(batch: Any, now: datetime) -> Any:
            self.sent.append(batch.to_json())
            return original(batch, now)

        rt.store.queue.send = send  # type: ignore[method-assign]


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(properties=jobs(), held_back=st.sampled_from([timedelta(0), timedelta(hours=3)]))
def test_preview_equals_what_the_real_dispatcher_queues(
    settings, storage, properties: dict[str, Any], held_back: timedelta
) -> None:
    clock = ManualClock(T0 - held_back)
    rt = Runtime.create(settings, clock, storage=storage)
    make_collection(rt)
    recording = Recording(rt)
    name = f"j{abs(hash(json.dumps(properties, sort_keys=True))) % 10**8}"
    response = call(rt, "Jobs_CreateOrUpdate", "PUT", name, {"properties": properties}, query=NEWER)
    assume(response.status == 201)  # a schedule that never fires, a quota: nothing to preview, not an example
    clock.current = T0
    preview = call(rt, "Jobs_ListOccurrences", "GET", name, query={**NEWER, "count": str(COUNT)})
    assert preview.status == 200, preview.body
    expected = [
        (
            to_utc(datetime.fromisoformat(o["occurrenceTime"].replace("Z", "+00:00"))),
            to_utc(datetime.fromisoformat(o["fireTime"].replace("Z", "+00:00"))),
        )
        for o in preview.body["value"]
    ]
    queued_before = [
        (o, d)
        for message in recording.sent
        for o, d in ((i.occurrence, i.due) for i in OccurrenceBatch.from_json(message).items)
        if d >= T0
    ]
    recording.sent.clear()
    dispatcher = Dispatcher(rt.store, clock)
    fired = list(queued_before)
    key = JobKey(SUB, RG, JC, name)
    while len(fired) < COUNT:
        job = rt.store.jobs.get(key)
        assert job is not None
        due = job.next_execution_time
        if due is None or due > T0 + timedelta(days=31):
            break
        clock.current = max(clock.current, due - timedelta(seconds=30))  # a tick a minute ahead of it
        dispatcher.dispatch(job, due, clock.now())
        for message in recording.sent:
            fired += [(i.occurrence, max(i.due, clock.now())) for i in OccurrenceBatch.from_json(message).items]
        recording.sent.clear()
    fired = fired[:COUNT]
    assume(fired)  # an example compares at least one fired occurrence, or it shows nothing
    assert expected[: len(fired)] == fired
