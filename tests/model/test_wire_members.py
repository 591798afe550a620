"""Members the API ignores, found against its own OpenAPI document (shared/wire_members.py), and the refusal
an api-version can switch on: 2016-03-01 stays lenient as the real service was."""

from __future__ import annotations

from shared.api.openapi import openapi_document
from shared.wire_members import REFUSING_API_VERSIONS, refusal, unknown_members

SCHEMAS = openapi_document()["components"]["schemas"]
JOB = {
    "id": "/subscriptions/s/...",
    "name": "jc/j",
    "properties": {
        "startTime": "2026-01-01T00:00:00Z",
        "recurence": {"frequency": "Hour"},
        "action": {
            "Type": "Http",
            "request": {
                "uri": "http://127.0.0.1:9/",
                "method": "GET",
                "headers": {"X-Anything": "goes"},
                "retryPolicy": {"retryType": "None"},
            },
            "errorAction": {
                "type": "Http",
                "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
                "retryPolicy": {"retryType": "none", "retryCont": 2},
            },
        },
        "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Monday", "ocurrence": 1}]}},
        "status": {"executionCount": 3},
    },
}


def test_every_unknown_member_is_named_by_its_path_with_what_was_meant() -> None:
    found = [(u.path, u.owner, u.suggestion) for u in unknown_members(JOB, SCHEMAS, "JobDefinition")]
    assert found == [
        ("properties.recurence", "JobProperties", "recurrence"),
        ("properties.action.request.retryPolicy", "HttpRequest", "properties.action.retryPolicy"),
        ("properties.action.errorAction.retryPolicy.retryCont", "RetryPolicy", "retryCount"),
        (
            "properties.recurrence.schedule.monthlyOccurrences[0].ocurrence",
            "JobRecurrenceScheduleMonthlyOccurrence",
            "Occurrence",
        ),  # the 2016-03-01 swagger spells it so
    ]  # case-insensitive names, read-only members (id, status) and free-form maps (headers) are not unknown
    assert unknown_members(JOB, SCHEMAS, "JobDefinition")[0].message() == (
        "properties.recurence: not a member of JobProperties: 2016-03-01 ignores it, "
        "the newer api-version refuses it (did you mean 'recurrence'?)"
    )


def test_collection_members() -> None:
    collection = {
        "location": "westus",
        "tags": {"any": "tag"},
        "properties": {"sku": {"name": "Free", "tier": "x"}, "quota": {"maxJobs": 3}},
    }
    assert [u.path for u in unknown_members(collection, SCHEMAS, "JobCollectionDefinition")] == [
        "properties.sku.tier",
        "properties.quota.maxJobs",
    ]


def test_only_the_newer_api_version_refuses() -> None:
    assert frozenset({"2026-12-01-preview"}) == REFUSING_API_VERSIONS  # 2016-03-01 stays lenient
    assert refusal("2016-03-01", JOB, SCHEMAS, "JobDefinition") is None
    newer = frozenset({"2026-12-01-preview"})
    error = refusal("2026-12-01-preview", JOB, SCHEMAS, "JobDefinition", refusing=newer)
    assert error is not None and (error.status, error.code) == (400, "BadRequest")
    assert error.message == (
        "properties.recurence: the member is not part of JobProperties in api-version "
        "2026-12-01-preview. Did you mean 'recurrence'?"
    )
    assert (
        refusal("2026-12-01-preview", {"properties": {"state": "Enabled"}}, SCHEMAS, "JobDefinition", refusing=newer)
        is None
    )
