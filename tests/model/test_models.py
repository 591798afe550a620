"""Wire models: case-insensitive input, faithful output casing, durations, write-only secrets."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.model import JobDefinition, format_duration, parse_duration

RECORDED = {  # the real create request of Scenario_JobCreateUpdateDeleteHttpJob (docs/wire-contract.md §2.12)
    "properties": {
        "startTime": "2015-07-13T00:00:00Z",
        "action": {
            "type": "Http",
            "request": {
                "uri": "http://www.bing.com/",
                "method": "GET",
                "body": "some body message!",
                "headers": {"content-type": "application/xml"},
            },
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2},
            "errorAction": {
                "type": "StorageQueue",
                "queueMessage": {
                    "storageAccount": "schedulersdktest",
                    "queueName": "queue1",
                    "sasToken": "ThIsiSmYtOkeNdoyOusEe",
                    "message": "some message!",
                },
            },
        },
        "recurrence": {"frequency": "Week", "interval": 1, "count": 10000, "endTime": "2020-10-10T10:10:10Z"},
        "state": "Enabled",
    }
}


def test_recorded_request_renders_like_the_service() -> None:
    wire = JobDefinition.model_validate(RECORDED).to_wire()["properties"]
    assert wire["action"]["retryPolicy"] == {"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 2}
    assert wire["recurrence"] == {"frequency": "week", "count": 10000, "endTime": "2020-10-10T10:10:10Z", "interval": 1}
    assert wire["state"] == "enabled"
    assert wire["action"]["type"] == "Http"
    assert "sasToken" not in wire["action"]["errorAction"]["queueMessage"]
    assert list(wire["action"]) == ["request", "type", "retryPolicy", "errorAction"]


def test_secrets_are_kept_for_the_store_only() -> None:
    job = JobDefinition.model_validate(RECORDED)
    stored = job.to_document()["properties"]["action"]["errorAction"]["queueMessage"]
    assert stored["sasToken"] == "ThIsiSmYtOkeNdoyOusEe"
    assert "ThIsiSmYtOkeNdoyOusEe" not in str(job.to_wire())


def test_property_names_and_enums_are_case_insensitive() -> None:
    job = JobDefinition.model_validate(
        {
            "PROPERTIES": {
                "Action": {"TYPE": "hTTp", "Request": {"URI": "http://x/", "Method": "get"}},
                "Recurrence": {
                    "Frequency": "MONTH",
                    "Schedule": {"MonthlyOccurrences": [{"Day": "FRIDAY", "occurrence": -1}], "Minutes": 5},
                },
            }
        }
    )
    wire = job.to_wire()["properties"]
    assert wire["action"]["type"] == "Http"
    expected = {"minutes": [5], "monthlyOccurrences": [{"day": "friday", "Occurrence": -1}]}
    assert wire["recurrence"]["schedule"] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30S", timedelta(seconds=30)),
        ("00:00:30", timedelta(seconds=30)),
        ("P1D", timedelta(days=1)),
        ("1.00:00:00", timedelta(days=1)),
        ("60.00:00:00", timedelta(days=60)),
        ("PT1H30M", timedelta(minutes=90)),
        ("P1DT2H", timedelta(days=1, hours=2)),
        ("00:01:00", timedelta(minutes=1)),
    ],
)
def test_durations_parse_both_forms(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "P", "PT", "30", "1:2", "00:61:00", "abc", "PT-5S"])
def test_durations_reject_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(seconds=30), "PT30S"),
        (timedelta(days=2), "P2D"),
        (timedelta(days=1, hours=2, minutes=3), "P1DT2H3M"),
        (timedelta(0), "PT0S"),
    ],
)
def test_durations_emit_iso(value: timedelta, text: str) -> None:
    assert format_duration(value) == text
    assert parse_duration(text) == value
