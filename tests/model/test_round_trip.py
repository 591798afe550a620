"""Round trip of every duration, instant and number the API accepts (hypothesis over the accepted grammar).

For each accepted value: what the model stores (its JSON document, as the store persists it) reads back
equal, renders to the documented wire text, and that text is accepted again as the same value. A value that
rendered to something the parser refuses (`PT1e-05S`) would make the job unreadable from then on. The grammar
and the documented renderings are in accepted_grammar.py; tests/api/test_round_trip_through_store.py runs the
same grammar through the API and the Table store.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model import JobCollectionDefinition, JobDefinition, format_duration, parse_duration
from shared.model.base import WireModel
from shared.model.durations import Ticks
from tests.model.accepted_grammar import (
    INT32_MAX,
    INT32_MIN,
    MAX_DURATION_TICKS,
    Moment,
    canonical_duration,
    canonical_instant,
    duration_texts,
    instant_texts,
    json_integers,
    ticks_between,
)


def _ticks(value: timedelta) -> int:
    return value.total_ticks() if isinstance(value, Ticks) else value // timedelta(microseconds=1) * 10


def _stored_and_read(definition: WireModel) -> Any:
    """What the store keeps (the JSON document) and reads back."""
    return type(definition).model_validate(json.loads(json.dumps(definition.to_document())))


@settings(max_examples=400, deadline=None)
@given(duration_texts(ticks_between(0, MAX_DURATION_TICKS)))
def test_every_accepted_duration_round_trips(accepted: tuple[str, int]) -> None:
    text, ticks = accepted
    value = parse_duration(text)
    assert _ticks(value) == ticks  # parsed exactly, to the 100 ns tick
    rendered = format_duration(value)
    assert rendered == canonical_duration(ticks)
    again = parse_duration(rendered)
    assert _ticks(again) == ticks and format_duration(again) == rendered

    job = JobDefinition.model_validate(
        {
            "properties": {
                "action": {
                    "type": "ServiceBusQueue",
                    "serviceBusQueueMessage": {"brokeredMessageProperties": {"timeToLive": text}},
                }
            }
        }
    )
    read = _stored_and_read(job)
    wire = read.to_wire()["properties"]["action"]["serviceBusQueueMessage"]["brokeredMessageProperties"]
    assert wire["timeToLive"] == rendered
    assert read == job and _stored_and_read(read).to_wire() == read.to_wire()


@settings(max_examples=400, deadline=None)
@given(start=instant_texts(), end=instant_texts(), enqueue=instant_texts())
def test_every_accepted_instant_round_trips(
    start: tuple[str, Moment], end: tuple[str, Moment], enqueue: tuple[str, Moment]
) -> None:
    job = JobDefinition.model_validate(
        {
            "properties": {
                "startTime": start[0],
                "recurrence": {"frequency": "Day", "endTime": end[0]},
                "action": {
                    "type": "ServiceBusTopic",
                    "serviceBusTopicMessage": {"brokeredMessageProperties": {"scheduledEnqueueTimeUtc": enqueue[0]}},
                },
            }
        }
    )
    properties = job.properties
    assert properties is not None and properties.recurrence is not None and properties.action is not None
    message = properties.action.service_bus_topic_message
    assert message is not None and message.brokered_message_properties is not None
    values = (
        properties.start_time,
        properties.recurrence.end_time,
        message.brokered_message_properties.scheduled_enqueue_time_utc,
    )
    assert values == tuple(sent[1].at for sent in (start, end, enqueue))  # as UTC instants
    assert tuple(getattr(v, "extra", 0) for v in values) == tuple(sent[1].tenths for sent in (start, end, enqueue))

    wire = job.to_wire()["properties"]
    rendered = (
        wire["startTime"],
        wire["recurrence"]["endTime"],
        wire["action"]["serviceBusTopicMessage"]["brokeredMessageProperties"]["scheduledEnqueueTimeUtc"],
    )
    assert rendered == tuple(canonical_instant(sent[1]) for sent in (start, end, enqueue))
    read = _stored_and_read(job)
    assert read == job and read.to_wire() == job.to_wire()
    assert JobDefinition.model_validate(read.to_wire()).to_wire() == job.to_wire()


@settings(max_examples=300, deadline=None)
@given(
    retry_count=json_integers(st.integers(0, 20)),
    count=json_integers(st.integers(1, INT32_MAX)),
    interval=json_integers(st.integers(1, 10**6)),
    minutes=st.lists(json_integers(st.integers(0, 59)), min_size=1, max_size=5),
    hours=st.lists(json_integers(st.integers(0, 23)), min_size=1, max_size=5),
    month_days=st.lists(json_integers(st.integers(1, 31) | st.integers(-31, -1)), min_size=1, max_size=5),
    occurrence=json_integers(st.integers(1, 5) | st.integers(-5, -1)),
    scalar_minute=json_integers(st.integers(0, 59), scalar=False),
)
def test_every_accepted_number_round_trips(
    retry_count: tuple[Any, int],
    count: tuple[Any, int],
    interval: tuple[Any, int],
    minutes: list[tuple[Any, int]],
    hours: list[tuple[Any, int]],
    month_days: list[tuple[Any, int]],
    occurrence: tuple[Any, int],
    scalar_minute: tuple[Any, int],
) -> None:
    sent = [m for m, _ in minutes] if len(minutes) > 1 else scalar_minute[0]
    expected_minutes = [m for _, m in minutes] if len(minutes) > 1 else [scalar_minute[1]]
    job = JobDefinition.model_validate(
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1/", "method": "GET"},
                    "retryPolicy": {"retryType": "Fixed", "retryCount": retry_count[0]},
                },
                "recurrence": {
                    "frequency": "Month",
                    "count": count[0],
                    "interval": interval[0],
                    "schedule": {
                        "minutes": sent,
                        "hours": [h for h, _ in hours],
                        "monthDays": [d for d, _ in month_days],
                        "monthlyOccurrences": [{"day": "Friday", "occurrence": occurrence[0]}],
                    },
                },
            }
        }
    )
    wire = job.to_wire()["properties"]
    recurrence = wire["recurrence"]
    assert wire["action"]["retryPolicy"]["retryCount"] == retry_count[1]
    assert (recurrence["count"], recurrence["interval"]) == (count[1], interval[1])
    schedule = recurrence["schedule"]
    assert (schedule["minutes"], schedule["hours"], schedule["monthDays"]) == (
        expected_minutes,
        [h for _, h in hours],
        [d for _, d in month_days],
    )
    assert schedule["monthlyOccurrences"] == [{"day": "friday", "Occurrence": occurrence[1]}]
    read = _stored_and_read(job)
    assert read == job and read.to_wire() == job.to_wire()
    assert JobDefinition.model_validate(read.to_wire()).to_wire() == job.to_wire()


@settings(max_examples=200, deadline=None)
@given(
    max_job_count=json_integers(st.integers(1, INT32_MAX)),
    max_job_occurrence=json_integers(st.integers(INT32_MIN, INT32_MAX)),
    interval=json_integers(st.integers(1, INT32_MAX)),
)
def test_every_accepted_quota_number_round_trips(
    max_job_count: tuple[Any, int], max_job_occurrence: tuple[Any, int], interval: tuple[Any, int]
) -> None:
    collection = JobCollectionDefinition.model_validate(
        {
            "location": "westus",
            "properties": {
                "quota": {
                    "maxJobCount": max_job_count[0],
                    "maxJobOccurrence": max_job_occurrence[0],
                    "maxRecurrence": {"frequency": "Hour", "interval": interval[0]},
                }
            },
        }
    )
    quota = collection.to_wire()["properties"]["quota"]
    assert (quota["maxJobCount"], quota["maxRecurrence"]["interval"]) == (max_job_count[1], interval[1])
    assert "maxJobOccurrence" not in quota  # accepted, never returned (nor stored), as by the real service
    read = _stored_and_read(collection)
    assert read == collection and read.to_wire() == collection.to_wire()
    assert JobCollectionDefinition.model_validate(read.to_wire()).to_wire() == collection.to_wire()
