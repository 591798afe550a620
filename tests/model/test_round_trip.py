"""Round trip of every duration, instant and number the API accepts (hypothesis over the accepted grammar).

For each accepted value: what the model stores (its JSON document, as the store persists it) reads back
equal, renders to the same wire text, and that text is accepted again as the same value. A value that
rendered to something the parser refuses (`PT1e-05S`) would make the job unreadable from then on.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model import JobDefinition, format_duration, format_utc, parse_duration
from shared.model.durations import TICKS_PER_SECOND, Ticks

digits = st.integers(min_value=0, max_value=10**6)
fraction = st.text(alphabet="0123456789", min_size=1, max_size=7)


@st.composite
def iso_durations(draw: st.DrawFn) -> tuple[str, int]:
    """An ISO 8601 duration text the API accepts, and its exact length in ticks."""
    weeks, days, hours, minutes, seconds = (draw(st.none() | digits) for _ in range(5))
    frac = draw(st.none() | fraction) if seconds is not None else None
    if all(v is None for v in (weeks, days, hours, minutes, seconds)):
        days = draw(digits)
    text = "P" + (f"{weeks}W" if weeks is not None else "") + (f"{days}D" if days is not None else "")
    time = (f"{hours}H" if hours is not None else "") + (f"{minutes}M" if minutes is not None else "")
    if seconds is not None:
        time += f"{seconds}" + (f".{frac}" if frac else "") + "S"
    text += f"T{time}" if time else ""
    whole = ((((weeks or 0) * 7 + (days or 0)) * 24 + (hours or 0)) * 60 + (minutes or 0)) * 60 + (seconds or 0)
    ticks = whole * TICKS_PER_SECOND + (int(frac.ljust(7, "0")) if frac else 0)
    return draw(st.sampled_from([text, text.lower()])), ticks


@st.composite
def timespans(draw: st.DrawFn) -> tuple[str, int]:
    """A .NET TimeSpan text `[d.]hh:mm:ss[.fffffff]` and its length in ticks."""
    days = draw(st.none() | digits)
    hours, minutes, seconds = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    frac = draw(st.none() | fraction)
    text = (f"{days}." if days is not None else "") + f"{hours:02d}:{minutes:02d}:{seconds:02d}"
    text += f".{frac}" if frac else ""
    whole = (((days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds
    return text, whole * TICKS_PER_SECOND + (int(frac.ljust(7, "0")) if frac else 0)


def _ticks(value: timedelta) -> int:
    return value.total_ticks() if isinstance(value, Ticks) else value // timedelta(microseconds=1) * 10


def _stored_and_read(definition: JobDefinition) -> JobDefinition:
    """What the store keeps (the JSON document) and reads back."""
    return JobDefinition.model_validate(json.loads(json.dumps(definition.to_document())))


@settings(max_examples=400, deadline=None)
@given(st.one_of(iso_durations(), timespans()))
def test_every_accepted_duration_round_trips(accepted: tuple[str, int]) -> None:
    text, ticks = accepted
    value = parse_duration(text)
    assert _ticks(value) == ticks  # parsed exactly, to the 100 ns tick
    rendered = format_duration(value)
    again = parse_duration(rendered)
    assert _ticks(again) == ticks and format_duration(again) == rendered

    job = JobDefinition.model_validate({"properties": {"action": {
        "type": "ServiceBusQueue", "serviceBusQueueMessage": {"brokeredMessageProperties": {"timeToLive": text}}}}})
    read = _stored_and_read(job)
    wire = read.to_wire()["properties"]["action"]["serviceBusQueueMessage"]["brokeredMessageProperties"]
    assert wire["timeToLive"] == rendered
    assert read == job and _stored_and_read(read).to_wire() == read.to_wire()


offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@st.composite
def instants(draw: st.DrawFn) -> str:
    """An instant text the API accepts: ISO 8601 with `Z`, an offset, or none (UTC), to the microsecond."""
    moment = draw(st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 30)))
    form = draw(st.sampled_from(["Z", "offset", "naive"]))
    separator = draw(st.sampled_from(["T", " "]))
    if form == "offset":
        return moment.replace(tzinfo=draw(offsets)).isoformat(sep=separator)
    return moment.isoformat(sep=separator) + ("Z" if form == "Z" else "")


@settings(max_examples=400, deadline=None)
@given(instants())
def test_every_accepted_instant_round_trips(text: str) -> None:
    job = JobDefinition.model_validate({"properties": {"startTime": text}})
    start = job.properties.start_time
    assert start is not None and start.tzinfo is not None
    rendered = job.to_wire()["properties"]["startTime"]
    assert rendered == format_utc(start) and rendered.endswith("Z")
    read = _stored_and_read(job)
    assert read.properties.start_time == start and read.to_wire()["properties"]["startTime"] == rendered
    assert JobDefinition.model_validate({"properties": {"startTime": rendered}}).properties.start_time == start
    expected = datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T"))
    assert start == (expected if expected.tzinfo else expected.replace(tzinfo=UTC))


@settings(max_examples=300, deadline=None)
@given(retry_count=st.integers(0, 20), count=st.integers(1, 2_147_483_647), interval=st.integers(1, 10**6),
       minutes=st.lists(st.integers(0, 59), min_size=1, max_size=5),
       hours=st.lists(st.integers(0, 23), min_size=1, max_size=5),
       month_days=st.lists(st.integers(1, 31) | st.integers(-31, -1), min_size=1, max_size=5),
       occurrence=st.integers(1, 5) | st.integers(-5, -1), as_text=st.booleans())
def test_every_accepted_number_round_trips(retry_count: int, count: int, interval: int, minutes: list[int],
                                           hours: list[int], month_days: list[int], occurrence: int,
                                           as_text: bool) -> None:
    number = str if as_text else int  # a number sent as a JSON string is accepted, and rendered as a number
    job = JobDefinition.model_validate({"properties": {
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1/", "method": "GET"},
                   "retryPolicy": {"retryType": "Fixed", "retryCount": number(retry_count)}},
        "recurrence": {"frequency": "Month", "count": number(count), "interval": number(interval), "schedule": {
            "minutes": [number(m) for m in minutes], "hours": [number(h) for h in hours],
            "monthDays": [number(d) for d in month_days],
            "monthlyOccurrences": [{"day": "Friday", "occurrence": number(occurrence)}]}}}})
    wire = job.to_wire()["properties"]
    recurrence = wire["recurrence"]
    assert wire["action"]["retryPolicy"]["retryCount"] == retry_count
    assert (recurrence["count"], recurrence["interval"]) == (count, interval)
    schedule = recurrence["schedule"]
    assert (schedule["minutes"], schedule["hours"], schedule["monthDays"]) == (minutes, hours, month_days)
    assert schedule["monthlyOccurrences"] == [{"day": "friday", "Occurrence": occurrence}]
    read = _stored_and_read(job)
    assert read == job and read.to_wire() == job.to_wire()
