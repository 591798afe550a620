"""Preview equals what the dispatcher fires over a simulated month for jobs with occurrence control: the random jobs
of test_preview.py given skips, moves and extra runs drawn from their own series, and a pause (pure: the
dispatcher's rule, tick by tick, as test_preview.py simulates it)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared import jobstate
from tests.jobstate.test_preview import COUNT, MONTH, T0, dispatched, jobs, written


def stamp(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def nominal(properties: dict[str, Any], at: datetime, n: int) -> list[datetime]:
    """The first `n` occurrences of the job's recurrence after `at` (the series the exceptions are drawn from)."""
    series = jobstate.series_of(written(properties, at))
    found: list[datetime] = []
    cursor = series.first_at_or_after(at + timedelta(minutes=1)) if series.recurring else None
    while cursor is not None and len(found) < n:
        found.append(cursor)
        cursor = series.following(cursor)
    return found


@st.composite
def controlled(draw: st.DrawFn, written_at: datetime) -> dict[str, Any]:
    properties = draw(jobs())
    occurrences = nominal(properties, written_at, 12)
    assume(len(occurrences) >= 4)
    picked = draw(st.lists(st.sampled_from(occurrences), min_size=1, max_size=4, unique=True))
    exceptions: list[dict[str, Any]] = []
    taken = set(occurrences)
    for i, occurrence in enumerate(sorted(picked)):
        kind = draw(st.sampled_from(["Skip", "Move"]))
        if kind == "Skip":
            exceptions.append({"type": "Skip", "occurrence": stamp(occurrence), "note": f"n{i}"})
            continue
        moved = occurrence + timedelta(seconds=draw(st.integers(-3 * 3600, 3 * 3600)))
        assume(moved > written_at and moved not in taken)
        taken.add(moved)
        exceptions.append({"type": "Move", "occurrence": stamp(occurrence), "moveTo": stamp(moved)})
    extra = written_at + timedelta(seconds=draw(st.integers(120, 20 * 86400)))
    assume(extra not in taken and extra not in nominal(properties, written_at, 400))
    exceptions.append({"type": "Add", "occurrence": stamp(extra)})
    properties["exceptions"] = exceptions
    if draw(st.booleans()):
        until = written_at + timedelta(minutes=draw(st.integers(1, 60 * 24 * 5)))
        properties["pause"] = {"until": stamp(until), "note": "held"}
    return properties


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.data(), st.sampled_from([timedelta(0), timedelta(hours=5)]))
def test_preview_equals_what_the_dispatcher_fires_with_exceptions_and_a_pause(data, held_back: timedelta) -> None:
    properties = data.draw(controlled(T0 - held_back))
    record = written(properties, T0 - held_back)
    preview, _ = jobstate.upcoming(record, T0, COUNT)
    queued = record.dispatched_occurrence
    offset = jobstate.offset_of(record)
    before = []
    if queued is not None and not held_back:  # queued by the write: at its instant, or at the end of its pause
        fires = queued + offset
        if "pause" in properties and stamp(queued) < properties["pause"]["until"]:
            fires = max(fires, datetime.fromisoformat(properties["pause"]["until"].replace("Z", "+00:00")))
        before = [(queued, fires)] if fires >= T0 else []
    later, horizon = dispatched(record, T0, T0 + MONTH, COUNT)
    fired = [(o, f) for o, f in before + later if f >= T0][:COUNT]
    expected = [(u.occurrence, u.fires) for u in preview]
    if len(fired) < COUNT:
        expected = [(o, f) for o, f in expected if o < horizon]
    assume(fired)
    assert expected[: len(fired)] == fired and len(expected) >= len(fired)
    skipped = {e["occurrence"] for e in properties["exceptions"] if e["type"] != "Add"}
    assert not skipped & {stamp(o) for o, _ in fired}  # nothing taken out fires
    pause = properties.get("pause")
    if pause is not None:  # nothing fires before the pause's end
        assert all(stamp(f) >= pause["until"] or f < T0 - held_back for _, f in fired)
