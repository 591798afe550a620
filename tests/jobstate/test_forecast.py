"""The load forecast (jobstate/forecast.py): hand-built jobs counted per minute and per destination, with their
spread, cron, exceptions, pause and state; the seconds over a rate limit; the cut of a job with too many
occurrences; and, over random jobs together, the forecast's minutes equal to what the dispatcher fires over a
simulated day (the dispatcher simulated with its own functions, as tests/jobstate/test_preview.py does)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared import jobstate
from shared.dispatcher import dispatch_horizon
from shared.jobstate.forecast import Destination, Forecast, forecast
from shared.keys import CollectionKey
from shared.model import JobCollectionDefinition, JobCollectionState, JobProperties, JobState
from shared.records import CollectionRecord, JobRecord
from shared.recurrence import RecurrenceError
from tests.jobstate.test_occurrence_control_preview import controlled, stamp
from tests.jobstate.test_preview import T0, dispatched, jobs

NOW = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)
COLLECTION = CollectionKey("s", "g", "c")
ID = COLLECTION.resource_id
DAY = timedelta(days=1)


def http(host: str = "api.example.com") -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": f"https://{host}/hook", "method": "POST"}}


def job(name: str, at: datetime = NOW, state: JobState = JobState.ENABLED, **properties: Any) -> JobRecord:
    """The job as the lifecycle stores it when written at `at`: planned, and its first occurrence dispatched by the
    write when it lies inside the dispatcher's horizon (tests/jobstate/test_preview.py `written`)."""
    parsed = JobProperties.model_validate({"action": http(), **properties})
    start = parsed.start_time or at
    record = jobstate.written(COLLECTION.job(name), parsed, state, None, at, start)
    try:
        record = jobstate.planned(record, at)
    except RecurrenceError:
        assume(False)
    first = record.next_execution_time
    if state == JobState.ENABLED and first is not None and first < dispatch_horizon(at):
        record = jobstate.advanced(record, jobstate.dispatch_step(record, first, at))
    return record


def collection(state: JobCollectionState = JobCollectionState.ENABLED, **properties: Any) -> CollectionRecord:
    definition = JobCollectionDefinition.model_validate(
        {"location": "westus", "properties": {"sku": {"name": "Standard"}, **properties}}
    )
    return CollectionRecord(COLLECTION, definition, state)


def of(*records: JobRecord, hours: int = 1, **properties: Any) -> Forecast:
    return forecast([(collection(**properties), records)], NOW, hours)


def minutes(found: Forecast) -> dict[str, int]:
    return {f"{m.at:%H:%M}": m.count for m in found.minutes}


EVERY_MINUTE = {"startTime": stamp(NOW), "recurrence": {"frequency": "Minute", "interval": 1}}
HOURLY = {"startTime": stamp(NOW), "recurrence": {"frequency": "Hour", "interval": 1}}


def test_an_every_minute_job_fires_once_in_each_minute_of_the_window() -> None:
    found = of(job("m", **EVERY_MINUTE))
    assert minutes(found) == {f"{9 + i // 60:02d}:{i % 60:02d}": 1 for i in range(60)}
    assert (found.since, found.until) == (NOW, NOW + timedelta(hours=1)) and found.notes == ()
    [host] = found.destinations
    assert (host.destination, host.total, host.limit, host.over_limit) == (
        Destination("api.example.com", "Http"),
        60,
        None,
        (),
    )
    assert (host.busiest.at, host.busiest.count) == (NOW, 1)  # the earliest of equals


def test_a_spread_job_counts_at_its_fire_instant_not_its_nominal_time() -> None:
    spread = job("spread", **HOURLY, spreadWindow="PT30M")
    offset = jobstate.offset_of(spread)
    assert offset > timedelta(minutes=1)  # the job's name puts it well inside the window
    found = of(spread, hours=3)
    fires = [NOW + timedelta(hours=h) + offset for h in range(3)]
    assert [(m.at, m.count) for m in found.minutes] == [(f.replace(second=0), 1) for f in fires]
    assert found.destinations[0].busiest.at == fires[0]


def test_a_cron_job_counts_what_its_expression_names() -> None:
    cron = job("cron", startTime=stamp(NOW), recurrence={"cron": "*/15 9-10 * * *"})
    assert minutes(of(cron, hours=3)) == {"09:00": 1, "09:15": 1, "09:30": 1, "09:45": 1} | {
        "10:00": 1,
        "10:15": 1,
        "10:30": 1,
        "10:45": 1,
    }


def test_exceptions_take_out_move_and_add_occurrences() -> None:
    excepted = job(
        "excepted",
        **HOURLY,
        exceptions=[
            {"type": "Skip", "occurrence": stamp(NOW + timedelta(hours=1))},
            {
                "type": "Move",
                "occurrence": stamp(NOW + timedelta(hours=2)),
                "moveTo": stamp(NOW + timedelta(minutes=150)),
            },
            {"type": "Add", "occurrence": stamp(NOW + timedelta(minutes=200))},
        ],
    )
    assert minutes(of(excepted, hours=4)) == {"09:00": 1, "11:30": 1, "12:00": 1, "12:20": 1}


def test_a_paused_job_fires_nothing_before_its_until_and_its_resume_runs_the_latest_held() -> None:
    paused = job(
        "paused",
        startTime=stamp(NOW),
        recurrence={"frequency": "Minute", "interval": 5},
        pause={"until": stamp(NOW + timedelta(minutes=32))},
    )
    # Missed-run policy Latest (the default): of 09:00 .. 09:30, the latest runs at the end of the pause.
    assert minutes(of(paused)) == {"09:32": 1, "09:35": 1, "09:40": 1, "09:45": 1, "09:50": 1, "09:55": 1}
    every = job(
        "paused-all",
        startTime=stamp(NOW),
        recurrence={"frequency": "Minute", "interval": 5},
        pause={"until": stamp(NOW + timedelta(minutes=32))},
        missedRunPolicy={"type": "All", "maxRuns": 3, "window": "PT1H"},
    )
    # Policy All (3 runs): the latest three held run one a second from the end of the pause.
    found = of(every)
    assert minutes(found) == {"09:32": 3, "09:35": 1, "09:40": 1, "09:45": 1, "09:50": 1, "09:55": 1}
    assert (found.destinations[0].busiest.at, found.destinations[0].busiest.count) == (NOW + timedelta(minutes=32), 1)


def test_jobs_and_collections_that_are_not_enabled_fire_nothing_and_say_so() -> None:
    disabled = job("off", state=JobState.DISABLED, **EVERY_MINUTE)
    found = of(disabled, job("on", **HOURLY))
    assert minutes(found) == {"09:00": 1}
    assert [n.code for n in found.notes] == ["JobsNotEnabled"] and "1 Disabled" in found.notes[0].message
    off = forecast([(collection(JobCollectionState.DISABLED), [job("on", **HOURLY)])], NOW, 24)
    assert off.minutes == () and off.destinations == () and [n.code for n in off.notes] == ["CollectionDisabled"]


def test_a_collections_pause_holds_its_occurrences_due_before_until() -> None:
    found = of(job("m", **EVERY_MINUTE), pause={"until": stamp(NOW + timedelta(minutes=50))})
    assert minutes(found) == {f"09:{m}": 1 for m in range(50, 60)}
    assert [n.code for n in found.notes] == ["CollectionPaused"]


def test_two_jobs_at_one_second_to_a_host_of_one_request_a_second_are_over_its_limit() -> None:
    first, second = job("a", **HOURLY), job("b", **HOURLY)
    found = of(first, second, hours=2, targetRateLimits=[{"host": "API.example.com", "requestsPerSecond": 1}])
    [host] = found.destinations
    assert (host.limit, host.limit_host, host.total, host.busiest.count) == (1.0, "API.example.com", 4, 2)
    assert [(o.second, o.count, o.collection) for o in host.over_limit] == [
        (NOW, 2, ID),
        (NOW + timedelta(hours=1), 2, ID),
    ]
    assert host.over_limit_seconds == 2
    roomy = of(first, second, hours=2, targetRateLimits=[{"host": "api.example.com", "requestsPerSecond": 2}])
    assert roomy.destinations[0].limit == 2.0 and roomy.destinations[0].over_limit == ()
    slow = of(first, hours=2, targetRateLimits=[{"host": "api.example.com", "requestsPerSecond": 0.5}])
    assert slow.destinations[0].over_limit == ()  # one request in a second is within any rule


def test_a_wildcard_rule_shares_its_budget_between_the_hosts_under_it() -> None:
    a = job("a", **HOURLY, action=http("a.example.com"))
    b = job("b", **HOURLY, action=http("b.example.com"))
    found = of(a, b, targetRateLimits=[{"host": "*.example.com", "requestsPerSecond": 1}])
    assert sorted(d.destination.name for d in found.destinations) == ["a.example.com", "b.example.com"]
    for host in found.destinations:
        assert (host.total, host.limit_host) == (1, "*.example.com")
        assert [(o.second, o.count) for o in host.over_limit] == [(NOW, 2)]  # two under the rule in that second


def test_destinations_are_hosts_namespaces_and_accounts_and_the_error_action_is_not_counted() -> None:
    bus = {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "MyBus", "queueName": "q"}}
    queue = {"type": "StorageQueue", "queueMessage": {"storageAccount": "Acct1", "queueName": "q", "sasToken": "x"}}
    failing = {**http("API.Example.com"), "errorAction": http("errors.example.com")}
    found = of(
        job("bus", **HOURLY, action=bus), job("queue", **HOURLY, action=queue), job("web", **HOURLY, action=failing)
    )
    assert {(d.destination.name, d.destination.kind, d.total) for d in found.destinations} == {
        ("mybus", "ServiceBus", 1),
        ("acct1", "StorageQueue", 1),
        ("api.example.com", "Http", 1),
    }
    assert minutes(found) == {"09:00": 3}


def test_a_job_with_more_occurrences_than_the_cap_is_cut_and_named() -> None:
    found = forecast([(collection(), [job("m", **EVERY_MINUTE)])], NOW, 1, cap=10)
    assert sum(m.count for m in found.minutes) == 10 and minutes(found)["09:09"] == 1
    assert [n.code for n in found.notes] == ["JobCut"] and "/jobs/m" in found.notes[0].message
    assert "its first 10 are counted" in found.notes[0].message


def test_the_answer_counts_at_most_its_total_and_says_which_jobs_it_left_out() -> None:
    many = [job(f"m{i:02d}", **EVERY_MINUTE) for i in range(25)]
    found = forecast([(collection(), many)], NOW, 1, cap=10, total=215)
    assert sum(m.count for m in found.minutes) == 215  # 21 jobs of 10, and 5 of the 22nd
    codes = [n.code for n in found.notes]
    assert codes == ["JobCut"] * 21 + ["Truncated"]  # 20 named, one note for the other two
    assert found.notes[-2].message == "2 more jobs were cut so."
    assert "/jobs/m21" not in " ".join(n.message for n in found.notes[:-2])
    assert found.notes[-1].message == "The answer counts at most 215 occurrences: 3 job(s) after them are not counted."


def test_the_window_is_1_to_168_hours() -> None:
    for hours in (0, 169):
        with pytest.raises(ValueError):
            forecast([], NOW, hours)
    week = forecast([(collection(), [job("m", **EVERY_MINUTE)])], NOW, 168)
    assert sum(m.count for m in week.minutes) == 10_000 and [n.code for n in week.notes] == ["JobCut"]


HOSTS = ["a.example.com", "b.example.com", "c.example.com"]


def _random_job(data: st.DataObject, i: int) -> JobRecord:
    properties = data.draw(st.one_of(jobs(), controlled(T0)))
    properties["action"] = http(data.draw(st.sampled_from(HOSTS)))
    return job(f"j{i}", at=T0, **properties)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.data(), st.integers(2, 5))
def test_the_forecast_equals_what_the_dispatcher_fires_over_a_simulated_day(data: st.DataObject, n: int) -> None:
    records = [_random_job(data, i) for i in range(n)]
    fired: Counter[tuple[str, datetime]] = Counter()
    for record in records:
        queued = record.dispatched_occurrence  # queued by the write: it fires at its instant, or at the pause's end
        before = []
        if queued is not None:
            fires = queued + jobstate.offset_of(record)
            pause = record.properties.pause
            if pause is not None and queued < pause.until:
                fires = max(fires, pause.until)
            before = [(queued, fires)]
        later, horizon = dispatched(record, T0, T0 + DAY, 100_000)
        assert horizon >= T0 + DAY
        host = jobstate.target_host(record.properties.action.request.uri)  # type: ignore[union-attr]
        fired.update((str(host), f.replace(second=0, microsecond=0)) for _, f in before + later if T0 <= f < T0 + DAY)
    found = forecast([(collection(), records)], T0, 24)
    assume(fired)
    per_minute: Counter[datetime] = Counter()
    for (_, minute), count in fired.items():
        per_minute[minute] += count
    assert [(m.at, m.count) for m in found.minutes] == sorted(per_minute.items())  # exact, not within 1 %
    forecast_by_host = {(d.destination.name, m.at): m.count for d in found.destinations for m in d.minutes}
    assert forecast_by_host == dict(fired)
