"""A job's attempts that one batch holds go out in their due order, even when all are past due at once (an `All`
catch-up received late, 1 s apart): each waits until the one before it is on the wire (or ended without sending)
before its own request is written; other jobs' attempts of the batch do not wait. Here the first of three
catch-ups is held by a runner that died (its lease lapsed): it is taken over after `takeover_wait`, and the two
after it wait for it instead of overtaking it. In-process on the memory store and a ManualClock, against a real
local HTTP target."""

from __future__ import annotations

from datetime import timedelta

from shared.manual_clock import ManualClock
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.store.claims import Wanted
from tests.executor.peers.servers import Server
from tests.executor.support import http, job_status, make_collection, put_job
from tests.support.manual_time import on_the_clock

EXPECTED = "x-ms-scheduler-expected-execution-time"
SLACK = timedelta(milliseconds=100)  # a threaded target's recording order among requests written together


def test_a_jobs_past_due_attempts_in_one_batch_go_out_in_due_order(
    rt: Runtime, clock: ManualClock, target: Server
) -> None:
    make_collection(rt, "P20Premium")
    tomorrow = (clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    put_job(rt, "caught", {"startTime": tomorrow, "action": http(f"{target.url}/caught")})
    put_job(rt, "other", {"startTime": tomorrow, "action": http(f"{target.url}/other")})
    caught, other = job_status(rt, "caught"), job_status(rt, "other")
    now = clock.now().replace(microsecond=0)
    dues = [now - timedelta(seconds=3), now - timedelta(seconds=2), now - timedelta(seconds=1)]
    items = [OccurrenceMessage(caught.key, due, due, generation=caught.generation) for due in dues]
    items.append(OccurrenceMessage(other.key, dues[1], dues[1], generation=other.generation))
    # The first catch-up's claim is a dead runner's, its lease lapsed a moment ago.
    held = rt.store.claims.claim_each([Wanted(caught.key, items[0].claim_id, "dead", now - timedelta(seconds=1))], now)
    assert held and held[0] is not None

    on_the_clock(clock, lambda: rt.executor.run(OccurrenceBatch(tuple(items))))

    caught_hits = [hit for hit in target.hits if hit.path == "/caught"]
    by_due = sorted(caught_hits, key=lambda hit: hit.headers[EXPECTED])
    assert [hit.headers[EXPECTED] for hit in by_due] == [due.strftime("%Y-%m-%dT%H:%M:%SZ") for due in dues]
    # Each request is written after the one before it (in due order), each on a connection of its own: the
    # target's threads may record two written a moment apart in either order, so order is judged by arrival times
    # with that moment's slack. Overtaking (the bug) is a takeover_wait's seconds.
    for earlier, later in zip(by_due, by_due[1:], strict=False):
        assert later.at >= earlier.at - SLACK, [(hit.headers[EXPECTED], hit.at.isoformat()) for hit in caught_hits]
    paths = [hit.path for hit in target.hits]
    # The other job's attempt waited for nobody: it went out before the taken-over first catch-up.
    assert paths.index("/other") < paths.index("/caught"), paths
    assert job_status(rt, "caught").execution_count == 3
