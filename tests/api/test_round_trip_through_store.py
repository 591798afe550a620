"""Round trip through the API and the Table store (Azurite) of every duration, instant and number the API accepts.

Hypothesis draws jobs and job collections over the accepted grammar (tests/model/accepted_grammar.py): every
duration (retryInterval, maxRetryInterval, Service Bus timeToLive, of the action and of its error action),
every instant (startTime, recurrence.endTime, scheduledEnqueueTimeUtc) and every number (retryCount,
recurrence interval and count, the schedule's minutes, hours, monthDays and occurrences, the collection's
quota). Each is PUT through the API, in 2016-03-01 or in the newest api-version (with its extensions), then:
- the GET answer holds each value as documented (durations in canonical ISO 8601, instants in UTC to the
  100 ns tick, numbers as JSON integers; no startTime a job was not given, no quota.maxJobOccurrence), and
  equals the PUT answer: what the store kept reads back as what was accepted;
- the list answers hold the same resource (one value the store cannot read back would drop it from lists);
- each api-version shows what it knows: the newest everything, 2016-03-01 no extension (docs/wire-contract.md §8);
- PUT of the GET answer is accepted and answers the same again, and so does the next GET: the rendering
  is a fixed point; a 2016-03-01 read-and-write-back leaves the newest version's answer unchanged.

Answers are compared whole, `status` included: the runtime's clock is fixed, so the status each read computes
(its nextExecutionTime read back from the store) must not change either.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.lifecycle.validation import HORIZON_MONTHS, MIN_RETRY_INTERVAL, add_months
from shared.model import RecurrenceFrequency, SkuName
from shared.model.versions import NEWEST, STABLE
from shared.recurrence import INTERVAL_LIMITS, Frequency
from shared.runtime import Runtime
from tests.model.accepted_grammar import (
    FIRST_INSTANT,
    INT32_MAX,
    INT32_MIN,
    LAST_INSTANT,
    MAX_DURATION_TICKS,
    canonical_duration,
    canonical_instant,
    duration_texts,
    instant_texts,
    json_integers,
    ticks_between,
)

JC, QUOTA_JC, JOB = "jc", "quota", "j"
ROUND_TRIP = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

NOW = datetime.fromisoformat("2026-03-01T12:00:30+00:00")  # the `clock` fixture's instant (whole seconds)
LATEST_START = add_months(NOW, HORIZON_MONTHS)  # "startTime must be at most 18 months ahead"


def _ticks(value: timedelta) -> int:
    return value // timedelta(microseconds=1) * 10


RETRY_TICKS = (_ticks(MIN_RETRY_INTERVAL), _ticks(LATEST_START - NOW))  # 15 seconds to 18 months
ABSENT = object()  # expected: the member is not in the answer
Path = tuple[str | int, ...]


class Drawn:
    """A request body being drawn, and what each of its values must read back as (by path in the answer)."""

    def __init__(self, draw: st.DrawFn, strict: bool = False) -> None:
        self.draw = draw
        self.strict = strict  # the newer api-version: a number is a JSON integer, never "5", " +05" or 5.0
        self.expected: dict[Path, Any] = {}

    def integer(self, values: st.SearchStrategy[int], scalar: bool = True) -> tuple[Any, int]:
        if self.strict:
            n = self.draw(values)
            return n, n
        return self.draw(json_integers(values, scalar=scalar))

    def maybe(self) -> bool:
        return self.draw(st.booleans())

    def duration(self, path: Path, low: int, high: int) -> str:
        text, ticks = self.draw(duration_texts(ticks_between(low, high)))
        self.expected[path] = canonical_duration(ticks)
        return text

    def instant(self, path: Path, low: datetime = FIRST_INSTANT, high: datetime = LAST_INSTANT) -> tuple[str, datetime]:
        text, moment = self.draw(instant_texts(low, high))
        self.expected[path] = canonical_instant(moment)
        return text, moment.at

    def number(self, path: Path, low: int, high: int) -> Any:
        sent, value = self.integer(st.integers(low, high))
        self.expected[path] = value
        return sent

    def numbers(self, path: Path, first: st.SearchStrategy[int], rest: st.SearchStrategy[int]) -> Any:
        """A schedule list; sometimes a bare scalar, which is accepted as a one-element list (Q15)."""
        if self.draw(st.integers(0, 3)) == 0:
            sent, value = self.integer(first, scalar=False)
            self.expected[path] = [value]
            return sent
        drawn = [self.integer(first)] + [self.integer(rest) for _ in range(self.draw(st.integers(0, 3)))]
        self.expected[path] = [value for _, value in drawn]
        return [sent for sent, _ in drawn]


def _case(value: str) -> st.SearchStrategy[str]:
    return st.sampled_from([value, value.lower(), value.upper()])


def _action(d: Drawn, path: Path, kind: str) -> dict[str, Any]:
    """A Service Bus action (queue or topic) carrying every duration and instant an action can hold."""
    member = "serviceBusQueueMessage" if kind == "ServiceBusQueue" else "serviceBusTopicMessage"
    target: dict[str, Any] = {"namespace": "ns", "message": "m"}
    target |= {"queueName": "q"} if kind == "ServiceBusQueue" else {"topicPath": "t"}
    brokered: dict[str, Any] = {}
    where = (*path, member, "brokeredMessageProperties")
    if d.maybe():
        brokered["timeToLive"] = d.duration((*where, "timeToLive"), 0, MAX_DURATION_TICKS)
    if d.maybe():
        brokered["scheduledEnqueueTimeUtc"] = d.instant((*where, "scheduledEnqueueTimeUtc"))[0]
    if brokered:
        target["brokeredMessageProperties"] = brokered
    action: dict[str, Any] = {"type": d.draw(_case(kind)), member: target}
    if d.maybe():
        policy: dict[str, Any] = {"retryType": d.draw(st.sampled_from(["None", "Fixed", "Exponential", "fixed"]))}
        where = (*path, "retryPolicy")
        d.expected[(*where, "retryType")] = policy["retryType"].lower()  # camel-cased, as the service did
        if d.maybe():
            policy["retryInterval"] = d.duration((*where, "retryInterval"), *RETRY_TICKS)
        if d.maybe():
            policy["maxRetryInterval"] = d.duration((*where, "maxRetryInterval"), *RETRY_TICKS)
        if d.maybe():
            policy["retryCount"] = d.number((*where, "retryCount"), 0, 20)
        action["retryPolicy"] = policy
    return action


def _nonzero(limit: int) -> st.SearchStrategy[int]:
    return st.integers(-limit, limit).filter(bool)


def _schedule(d: Drawn, path: Path, frequency: Frequency) -> dict[str, Any]:
    """A schedule that fires for any interval and startTime (`hours` only above Hour, `minutes` above Minute,
    and a first month day or occurrence that every month has), so the job is accepted."""
    schedule: dict[str, Any] = {}
    if frequency != Frequency.MINUTE and d.maybe():
        schedule["minutes"] = d.numbers((*path, "minutes"), st.integers(0, 59), st.integers(0, 59))
    if frequency not in (Frequency.MINUTE, Frequency.HOUR) and d.maybe():
        schedule["hours"] = d.numbers((*path, "hours"), st.integers(0, 23), st.integers(0, 23))
    if frequency == Frequency.WEEK and d.maybe():
        schedule["weekDays"] = d.draw(st.lists(st.sampled_from(["Monday", "friday", "SUNDAY"]), min_size=1))
    if frequency == Frequency.MONTH:
        choice = d.draw(st.sampled_from(["monthDays", "monthlyOccurrences", None]))
        if choice == "monthDays":
            schedule["monthDays"] = d.numbers((*path, "monthDays"), _nonzero(28), _nonzero(31))
        elif choice == "monthlyOccurrences":
            occurrences = []
            for i in range(d.draw(st.integers(1, 3))):
                item: dict[str, Any] = {"day": d.draw(st.sampled_from(["Friday", "monday"]))}
                where = (*path, "monthlyOccurrences", i, "Occurrence")
                if d.maybe():
                    limit = 4 if i == 0 else 5  # the first occurrence is in every month
                    sent, value = d.integer(_nonzero(limit))
                    item[d.draw(st.sampled_from(["occurrence", "Occurrence"]))] = sent
                    d.expected[where] = value
                else:
                    d.expected[where] = ABSENT
                occurrences.append(item)
            schedule["monthlyOccurrences"] = occurrences
    return schedule


def _recurrence(d: Drawn, path: Path, start: datetime | None) -> tuple[dict[str, Any], datetime | None]:
    frequency = d.draw(st.sampled_from(list(INTERVAL_LIMITS)))
    recurrence: dict[str, Any] = {"frequency": d.draw(_case(frequency.value))}
    if d.maybe():
        recurrence["interval"] = d.number((*path, "interval"), 1, INTERVAL_LIMITS[frequency])
    else:
        d.expected[(*path, "interval")] = 1  # absent reads as 1, and the answer carries it
    if d.maybe():
        recurrence["count"] = d.number((*path, "count"), 1, INT32_MAX)
    end = None
    if d.maybe():
        recurrence["endTime"], end = d.instant((*path, "endTime"), low=start or FIRST_INSTANT)
    if d.maybe():
        recurrence["schedule"] = _schedule(d, (*path, "schedule"), frequency)
    if d.maybe():  # an extension (2026-12-01-preview)
        recurrence["timeZone"] = d.expected[(*path, "timeZone")] = d.draw(
            st.sampled_from(["Europe/London", "America/New_York", "UTC", "Asia/Kathmandu"])
        )
    return recurrence, end


@st.composite
def jobs(draw: st.DrawFn, strict: bool = False) -> tuple[dict[str, Any], dict[Path, Any]]:
    """A job body the API accepts (`strict`: the newer api-version, which takes only JSON integers as numbers),
    and what each duration, instant and number in it must read back as."""
    d = Drawn(draw, strict)
    properties: dict[str, Any] = {}
    start = None
    if d.maybe():
        properties["startTime"], start = d.instant(("properties", "startTime"), high=LATEST_START)
    properties["action"] = _action(d, ("properties", "action"), "ServiceBusQueue")
    if d.maybe():
        properties["action"]["errorAction"] = _action(d, ("properties", "action", "errorAction"), "ServiceBusTopic")
    end = None
    if d.maybe():
        properties["recurrence"], end = _recurrence(d, ("properties", "recurrence"), start)
    if start is None:  # it runs from its creation, but shows no startTime it was not given (wire-contract.md §7)
        d.expected[("properties", "startTime")] = ABSENT
    return {"properties": properties}, d.expected


@st.composite
def collections(draw: st.DrawFn) -> tuple[dict[str, Any], dict[Path, Any]]:
    """A job collection body with every quota number, and what each must read back as."""
    d = Drawn(draw)
    quota: dict[str, Any] = {}
    where = ("properties", "quota")
    if d.maybe():
        quota["maxJobCount"] = d.number((*where, "maxJobCount"), 1, INT32_MAX)
    else:
        d.expected[(*where, "maxJobCount")] = ABSENT
    if d.maybe():  # accepted, never returned (wire-contract.md §7)
        quota["maxJobOccurrence"] = d.draw(json_integers(st.integers(INT32_MIN, INT32_MAX)))[0]
    d.expected[(*where, "maxJobOccurrence")] = ABSENT
    if d.maybe():
        frequency = d.draw(st.sampled_from(list(RecurrenceFrequency)))
        quota["maxRecurrence"] = {"frequency": d.draw(_case(frequency.value))}
        if d.maybe():
            quota["maxRecurrence"]["interval"] = d.number((*where, "maxRecurrence", "interval"), 1, INT32_MAX)
        else:
            d.expected[(*where, "maxRecurrence", "interval")] = ABSENT
    sku = d.draw(st.sampled_from(list(SkuName))).value
    return {"location": "westus", "properties": {"sku": {"name": d.draw(_case(sku))}, "quota": quota}}, d.expected


def _at(body: Any, path: Path) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(body, list) or part >= len(body):
                return ABSENT
        elif not isinstance(body, dict) or part not in body:
            return ABSENT
        body = body[part]
    return body


def _assert_reads_back(answer: dict[str, Any], expected: dict[Path, Any]) -> None:
    for path, value in expected.items():
        assert _at(answer, path) is value if value is ABSENT else _at(answer, path) == value, (path, answer)


@pytest.fixture
def runtime(settings, clock) -> Iterator[Runtime]:
    """The test's runtime on the fixed clock, so the 18-month horizons are fixed too (overrides conftest's)."""
    assert clock.now() == NOW, "the bounds above are drawn for the clock fixture's instant"
    runtime = Runtime.create(settings, clock=clock)
    yield runtime
    runtime.close()


@pytest.fixture
def jobs_api(inproc):
    """The in-process API with the one collection every example's job goes to."""
    inproc.put_collection(JC)
    return inproc


def _in_2016(expected: dict[Path, Any]) -> dict[Path, Any]:
    """What 2016-03-01 shows of the same job: no extension (docs/wire-contract.md §8), so no timeZone and no
    maxRetryInterval, and an Exponential retry shown as Fixed."""
    view: dict[Path, Any] = {}
    for path, value in expected.items():
        if path[-1] in ("timeZone", "maxRetryInterval"):
            value = ABSENT
        elif path[-1] == "retryType" and value == "exponential":
            value = "fixed"
        view[path] = value
    return view


def _job_call(api, operation: str, method: str, version: str, body: Any = None, expect: int = 200) -> Any:
    answer = api.call(
        operation, method, JC, None if operation == "Jobs_List" else JOB, body=body, query={"api-version": version}
    )
    assert answer.status == expect, answer.body
    return answer.body


@ROUND_TRIP
@given(data=st.data(), version=st.sampled_from([STABLE, NEWEST.name]))
def test_every_accepted_job_value_reads_back_and_renders_again_identically(jobs_api, data, version) -> None:
    body, expected = data.draw(jobs(strict=version != STABLE))
    jobs_api.call("Jobs_Delete", "DELETE", JC, JOB)  # the previous example's job, if any
    put = _job_call(jobs_api, "Jobs_CreateOrUpdate", "PUT", version, body, expect=201)
    newest = _job_call(jobs_api, "Jobs_Get", "GET", NEWEST.name)
    _assert_reads_back(newest, expected)
    old = _job_call(jobs_api, "Jobs_Get", "GET", STABLE)
    _assert_reads_back(old, _in_2016(expected))
    assert put == (old if version == STABLE else newest)

    assert _job_call(jobs_api, "Jobs_List", "GET", NEWEST.name)["value"] == [newest]
    assert _job_call(jobs_api, "Jobs_List", "GET", STABLE)["value"] == [old]

    # Written back as read: a 2016-03-01 write keeps what that version does not show, so nothing changes.
    assert _job_call(jobs_api, "Jobs_CreateOrUpdate", "PUT", STABLE, old) == old
    assert _job_call(jobs_api, "Jobs_Get", "GET", NEWEST.name) == newest
    assert _job_call(jobs_api, "Jobs_CreateOrUpdate", "PUT", NEWEST.name, newest) == newest
    assert _job_call(jobs_api, "Jobs_Get", "GET", NEWEST.name) == newest


@ROUND_TRIP
@given(collection=collections())
def test_every_accepted_quota_number_reads_back_and_renders_again_identically(inproc, collection) -> None:
    body, expected = collection
    put = inproc.call("JobCollections_CreateOrUpdate", "PUT", QUOTA_JC, body=body)
    assert put.status == 201, put.body
    got = inproc.call("JobCollections_Get", "GET", QUOTA_JC)
    assert got.status == 200, got.body
    _assert_reads_back(got.body, expected)
    assert got.body == put.body

    for operation in ("JobCollections_ListByResourceGroup", "JobCollections_ListBySubscription"):
        listed = inproc.call(operation, "GET")
        assert listed.status == 200, listed.body
        assert listed.body["value"] == [got.body]

    again = inproc.call("JobCollections_CreateOrUpdate", "PUT", QUOTA_JC, body=got.body)
    assert again.status == 201, again.body
    assert again.body == got.body
    assert inproc.call("JobCollections_Get", "GET", QUOTA_JC).body == got.body
