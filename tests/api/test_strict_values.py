"""Strict values in api-version 2026-12-01-preview (issue 36): booleans are not numbers, numbers are not text,
instants are ISO 8601 text with nothing around it, no control character in any text, a member named twice in any
case is refused, and rate-limit hosts are ASCII as DNS carries them. Each refusal is a 400 naming the member, and
nothing is stored (read back). 2016-03-01 keeps the recorded service's leniency for the members it knows.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from shared.jobstate import rule_for, target_host
from shared.model import PREVIEW_API_VERSION, TargetRateLimit
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
OLDER = {"api-version": "2016-03-01"}
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


@pytest.fixture
def rt(settings, clock: ManualClock) -> Iterator[Runtime]:
    runtime = Runtime.create(settings, clock)
    make_collection(runtime)
    yield runtime
    runtime.close()


def _refused(answer: Any, member: str) -> str:
    assert answer.status == 400, answer.body
    assert answer.body["error"]["code"] == "BadRequest"
    message: str = answer.body["error"]["message"]
    assert message.startswith(f"{member}:"), message
    return message


def _collection(rt: Runtime, query: dict[str, str] = NEWER) -> dict[str, Any]:
    got = call(rt, "JobCollections_Get", "GET", query=query)
    assert got.status == 200
    return dict(got.body["properties"])


@pytest.mark.parametrize("query", [NEWER, OLDER], ids=["newer", "2016-03-01"])
@pytest.mark.parametrize(
    ("limits", "member"),
    [
        ({"maxConcurrentExecutions": True}, "properties.maxConcurrentExecutions"),
        ({"maxConcurrentExecutions": "3"}, "properties.maxConcurrentExecutions"),
        (
            {"targetRateLimits": [{"host": "api.example.com", "requestsPerSecond": True}]},
            "properties.targetRateLimits[0].requestsPerSecond",
        ),
        ({"historyRetention": {"maxEntriesPerJob": True}}, "properties.historyRetention.maxEntriesPerJob"),
    ],
)
def test_a_boolean_is_not_a_number_in_the_collection_limits(
    rt: Runtime, limits: dict[str, Any], member: str, query: dict[str, str]
) -> None:
    before = _collection(rt)
    patch = call(rt, "JobCollections_Patch", "PATCH", body={"properties": limits}, query=query)
    _refused(patch, member)
    put = call(
        rt, "JobCollections_CreateOrUpdate", "PUT", body={"location": "West US", "properties": limits}, query=query
    )
    _refused(put, member)
    assert _collection(rt) == before
    fresh = call(
        rt,
        "JobCollections_CreateOrUpdate",
        "PUT",
        body={"location": "West US", "properties": limits},
        query=query,
        collection="fresh",
    )
    _refused(fresh, member)
    assert call(rt, "JobCollections_Get", "GET", query=NEWER, collection="fresh").status == 404


@pytest.mark.parametrize(
    ("host", "ascii_form"),
    [
        ("\u212aelvin.example", "kelvin.example"),  # KELVIN SIGN: Unicode lower-cases it to `k`
        ("\u017ftatus.example", "status.example"),  # LATIN SMALL LETTER LONG S: case-folds to `s`
        ("\u0130stanbul.example", "xn--istanbul-o0e.example"),  # I WITH DOT ABOVE
        ("\u0131i.example", "xn--i-eka.example"),  # DOTLESS I
        ("b\u00fccher.example", "xn--bcher-kva.example"),
    ],
)
def test_a_rate_limit_host_must_be_ascii_and_the_refusal_names_its_idna_form(
    rt: Runtime, host: str, ascii_form: str
) -> None:
    before = _collection(rt)
    rules = [{"host": ascii_form, "requestsPerSecond": 5}, {"host": host, "requestsPerSecond": 1}]
    message = _refused(
        call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"targetRateLimits": rules}}, query=NEWER),
        "properties.targetRateLimits[1].host",
    )
    assert repr(ascii_form) in message
    assert _collection(rt) == before


def test_two_rate_limits_for_one_host_are_refused_however_its_name_or_address_is_written(rt: Runtime) -> None:
    for hosts in (["API.example.com", "api.EXAMPLE.com"], ["::1", "0:0:0::1"], ["fe80::1", "FE80:0::1"]):
        rules = [{"host": host, "requestsPerSecond": 1} for host in hosts]
        message = _refused(
            call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"targetRateLimits": rules}}, query=NEWER),
            "properties.targetRateLimits",
        )
        assert "named twice" in message
    zoned = [{"host": "fe80::1%eth0", "requestsPerSecond": 1}]
    _refused(
        call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"targetRateLimits": zoned}}, query=NEWER),
        "properties.targetRateLimits[0].host",
    )
    assert "targetRateLimits" not in _collection(rt)
    written = [{"host": "xn--bcher-kva.example", "requestsPerSecond": 2.5}, {"host": "::1", "requestsPerSecond": 7}]
    kept = call(rt, "JobCollections_Patch", "PATCH", body={"properties": {"targetRateLimits": written}}, query=NEWER)
    assert kept.status == 200, kept.body
    assert _collection(rt)["targetRateLimits"] == written


def test_a_rate_limit_paces_the_host_the_http_client_sends_to() -> None:
    rules = [
        TargetRateLimit(host="xn--bcher-kva.example", requests_per_second=1),
        TargetRateLimit(host="0:0::1", requests_per_second=2),
        TargetRateLimit(host="*.example.com", requests_per_second=3),
    ]
    for uri, rate in (
        ("http://b\u00fccher.example/x", 1),
        ("http://B\u00dcCHER.example/x", 1),
        ("http://[::1]:8080/", 2),
        ("http://api.EXAMPLE.com/", 3),
    ):
        host = target_host(uri)
        assert host is not None
        rule = rule_for(host, rules)
        assert rule is not None and rule.requests_per_second == rate, uri


def _past_job(rt: Runtime, clock: ManualClock) -> str:
    start = (clock.now() - timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    body = {"properties": {"startTime": start.isoformat(), "action": ACTION, "recurrence": {"frequency": "Minute"}}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "past", body, query=NEWER).status == 201
    return start.strftime("%Y-%m-%dT%H:%M:%SZ")


def _queued(rt: Runtime) -> int:
    return int(rt.store.queue.client.get_queue_properties().approximate_message_count)


@pytest.mark.parametrize(
    ("body", "member"),
    [
        ({"from": "{start}", "FROM": "{later}", "to": "{end}"}, "from"),
        ({"from": "{start}", "to": "{end}", "To": "{later}"}, "to"),
        ({"from": "{start}\u0000", "to": "{end}"}, "from"),
        ({"from": "{start}", "to": "{end}\u001f"}, "to"),
        ({"from": " {start}", "to": "{end}"}, "from"),
        ({"from": "1772362800", "to": "{end}"}, "from"),
        ({"from": 1772362800, "to": "{end}"}, "from"),
        ({"from": "{start}", "to": "{end}", "overlapPolicy": "Skip"}, None),
    ],
)
def test_a_backfill_body_is_read_strictly_and_a_refused_one_queues_nothing(
    rt: Runtime, clock: ManualClock, body: dict[str, Any], member: str | None
) -> None:
    start = _past_job(rt, clock)
    later, end = start.replace(":00:00Z", ":10:00Z"), start.replace(":00:00Z", ":20:00Z")
    queued = _queued(rt)
    sent = {
        key: value.format(start=start, later=later, end=end) if isinstance(value, str) else value
        for key, value in body.items()
    }
    answer = call(rt, "Jobs_Backfill", "POST", "past", sent, query=NEWER)
    if member is None:
        assert answer.status == 400 and "overlapPolicy" in answer.body["error"]["message"], answer.body
    else:
        _refused(answer, member)
    assert _queued(rt) == queued
    ledger = call(rt, "Jobs_ListJobHistory", "GET", "past", query=NEWER)
    assert ledger.status == 200 and ledger.body["value"] == []


LOOSE_JOBS = [
    ({"recurrence": {"frequency": "Day", "interval": True}}, "properties.recurrence.interval"),
    ({"recurrence": {"frequency": "Day", "interval": "2"}}, "properties.recurrence.interval"),
    ({"recurrence": {"frequency": "Day", "count": True}}, "properties.recurrence.count"),
    ({"recurrence": {"frequency": "Day", "count": 3.0}}, "properties.recurrence.count"),
    ({"recurrence": {"frequency": "Day", "schedule": {"hours": [True]}}}, "properties.recurrence.schedule.hours[0]"),
    ({"recurrence": {"frequency": "Day", "schedule": {"minutes": False}}}, "properties.recurrence.schedule.minutes"),
    ({"startTime": 1772362800}, "properties.startTime"),
    ({"startTime": "2026-03-02T00:00:00Z\u0000"}, "properties.startTime"),
    ({"recurrence": {"frequency": "Day", "endTime": "2027-01-01T00:00:00\u0000Z"}}, "properties.recurrence.endTime"),
    ({"recurrence": {"frequency": "Day", "timeZone": "Europe/London\u0000"}}, "properties.recurrence.timeZone"),
    ({"spreadWindow": 30}, "properties.spreadWindow"),
    ({"spreadWindow": "PT30S\u001f"}, "properties.spreadWindow"),
    ({"missedRunPolicy": {"type": "All", "maxRuns": True}}, "properties.missedRunPolicy.maxRuns"),
    ({"state": "Enabled\u0000"}, "properties.state"),
    (
        {"action": {**ACTION, "retryPolicy": {"retryType": "Fixed", "retryCount": True}}},
        "properties.action.retryPolicy.retryCount",
    ),
    (
        {"action": {**ACTION, "request": {**ACTION["request"], "uri": "http://127.0.0.1:9/\u0000"}}},
        "properties.action.request.uri",
    ),
    (
        {"action": {**ACTION, "request": {**ACTION["request"], "body": "a\u0000b"}}},
        "properties.action.request.body",
    ),
    (
        {
            "action": {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "namespace": "ns",
                    "queueName": "q",
                    "brokeredMessageProperties": {"forcePersistence": "yes"},
                },
            }
        },
        "properties.action.serviceBusQueueMessage.brokeredMessageProperties.forcePersistence",
    ),
]


@pytest.mark.parametrize(("properties", "member"), LOOSE_JOBS, ids=[m for _, m in LOOSE_JOBS])
def test_a_loose_value_in_a_job_body_is_refused_and_nothing_is_stored(
    rt: Runtime, properties: dict[str, Any], member: str
) -> None:
    body = {"properties": {"action": ACTION, **properties}}
    _refused(call(rt, "Jobs_CreateOrUpdate", "PUT", "loose", body, query=NEWER), member)
    assert call(rt, "Jobs_Get", "GET", "loose", query=NEWER).status == 404
    plain = {"properties": {"action": ACTION, "recurrence": {"frequency": "Hour"}}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "kept", plain, query=NEWER).status == 201
    before = call(rt, "Jobs_Get", "GET", "kept", query=NEWER).body
    _refused(call(rt, "Jobs_Patch", "PATCH", "kept", {"properties": properties}, query=NEWER), member)
    _refused(call(rt, "Jobs_CreateOrUpdate", "PUT", "kept", body, query=NEWER), member)
    assert call(rt, "Jobs_Get", "GET", "kept", query=NEWER).body == before


def test_a_control_character_in_a_free_form_name_is_refused(rt: Runtime) -> None:
    before = _collection(rt)
    tagged = {"location": "West US", "tags": {"team\u0000": "a"}, "properties": {"sku": {"name": "Standard"}}}
    _refused(call(rt, "JobCollections_CreateOrUpdate", "PUT", body=tagged, query=NEWER), "tags")
    headers = {**ACTION["request"], "headers": {"x-one\u0001": "1"}}
    _refused(
        call(rt, "Jobs_CreateOrUpdate", "PUT", "h", {"properties": {"action": {**ACTION, "request": headers}}}, NEWER),
        "properties.action.request.headers",
    )
    assert _collection(rt) == before
    assert call(rt, "Jobs_Get", "GET", "h", query=NEWER).status == 404


def test_2016_03_01_keeps_the_recorded_leniency_for_its_members(rt: Runtime) -> None:
    body = {"properties": {"action": ACTION, "recurrence": {"frequency": "Day", "interval": "2", "count": 3.0}}}
    answer = call(rt, "Jobs_CreateOrUpdate", "PUT", "lenient", body, query=OLDER)
    assert answer.status == 201, answer.body
    assert answer.body["properties"]["recurrence"]["interval"] == 2
    assert answer.body["properties"]["recurrence"]["count"] == 3


def test_instants_in_query_parameters_are_read_strictly(rt: Runtime) -> None:
    body = {"properties": {"action": ACTION, "recurrence": {"frequency": "Hour"}}}
    assert call(rt, "Jobs_CreateOrUpdate", "PUT", "q", body, query=NEWER).status == 201
    for text in ("2026-03-02T00:00:00Z\u0000", "1772409600", "2026-W10-1"):
        _refused(call(rt, "Jobs_ListOccurrences", "GET", "q", query={**NEWER, "from": text}), "from")
        expression = f"occurrenceTime ge {text}"
        _refused(call(rt, "Jobs_ListJobHistory", "GET", "q", query={**NEWER, "$filter": expression}), "$filter")
    assert (
        call(rt, "Jobs_ListOccurrences", "GET", "q", query={**NEWER, "from": "2026-03-02T00:00:00.5+01:00"}).status
        == 200
    )
