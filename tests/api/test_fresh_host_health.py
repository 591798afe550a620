"""GET /api/health on a host that has not ticked yet: it says what it saw (the heartbeat's age, the backlog) and
answers 200 until two intervals after its own start, since it could not have made the ticks missing before it
began serving (shared/health.py `Snapshot.behind`); past that, with still no tick of its own, 503 with
Retry-After. A host that has ticked is judged by its heartbeat again.

Each host is a runtime created afresh on the deployment's tables, on a manual clock: the one before it ticked
and stopped, an hour passes, then this one starts (as `make run` does on yesterday's development storage)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared import api
from shared.health import BEHIND_AFTER
from shared.keys import JobKey
from shared.runtime import Runtime
from shared.settings import Settings
from tests.support.clock import ManualClock


def _health(rt: Runtime) -> api.ApiResponse:
    return api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)


def _host_an_hour_after_the_last_tick(settings: Settings) -> tuple[Runtime, ManualClock]:
    before = ManualClock(datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1))
    Runtime.create(settings, before).dispatcher.tick()  # the last heartbeat, an hour ago
    clock = ManualClock(before.now() + timedelta(hours=1))
    return Runtime.create(settings, clock), clock


def test_a_fresh_host_reports_an_old_heartbeat_and_backlog_without_failing(settings: Settings) -> None:
    rt, clock = _host_an_hour_after_the_last_tick(settings)
    overdue = clock.now() - timedelta(minutes=30)  # left by the hour nothing ticked
    rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "ghost"), overdue, 0)

    answer = _health(rt)
    assert (answer.status, answer.body["status"]) == (200, "Degraded"), answer.body
    assert answer.body["dispatcher"]["behind"] is False and answer.body["dispatcher"]["ticking"] is False
    assert answer.body["dispatcher"]["secondsSinceLastTick"] == 3600
    assert answer.body["backlog"]["overdueOccurrences"] == 1
    assert answer.body["problems"][0] == "the dispatcher last ticked 3600 s ago (it ticks every 60 s)"

    clock.advance(BEHIND_AFTER)  # two intervals since it started: still within its grace
    assert _health(rt).status == 200

    clock.advance(timedelta(seconds=1))  # past them, and it has not ticked: now it is behind
    answer = _health(rt)
    assert (answer.status, answer.body["status"]) == (503, "Unhealthy"), answer.body
    assert answer.body["dispatcher"]["behind"] is True
    assert int(answer.headers["Retry-After"]) > 0


def test_a_host_that_ticked_is_judged_by_its_heartbeat_again(settings: Settings) -> None:
    rt, clock = _host_an_hour_after_the_last_tick(settings)
    rt.dispatcher.tick()
    assert _health(rt).body["status"] == "Healthy"

    old = clock.now() - timedelta(minutes=30)  # overdue for two intervals after a tick of its own: behind
    rt.store.due.add(JobKey("sub-1", "rg-1", "jc1", "ghost"), old, 0)
    answer = _health(rt)
    assert (answer.status, answer.body["dispatcher"]["behind"]) == (503, True), answer.body

    rt.dispatcher.tick()  # the entry (of no job) is swept
    clock.advance(BEHIND_AFTER + timedelta(seconds=1))  # and no heartbeat since: behind on its heartbeat alone
    assert _health(rt).status == 503
