"""GET .../jobs/{job}/occurrences (newer api-version only): the next occurrences with notes, `count` and `from`."""

from __future__ import annotations

from datetime import timedelta

from shared.model import PREVIEW_API_VERSION
from shared.runtime import Runtime
from tests.support.clock import ManualClock
from tests.support.scheduler_client import call, make_collection

NEWER = {"api-version": PREVIEW_API_VERSION}
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def test_the_preview_lists_occurrences_from_an_instant_with_notes(settings, clock: ManualClock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    start = clock.now().replace(second=0) + timedelta(days=1)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "daily",
            {
                "properties": {
                    "startTime": start.isoformat(),
                    "action": ACTION,
                    "recurrence": {"frequency": "Day", "endTime": (start + timedelta(days=4)).isoformat()},
                }
            },
            query=NEWER,
        ).status
        == 201
    )
    later = (start + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = call(rt, "Jobs_ListOccurrences", "GET", "daily", query={**NEWER, "count": "2", "from": later})
    assert answer.status == 200, answer.body
    assert [(o["occurrenceTime"], o["fireTime"]) for o in answer.body["value"]] == [
        (later, later),
        ((start + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ"),) * 2,
    ]
    every = call(rt, "Jobs_ListOccurrences", "GET", "daily", query=NEWER).body["value"]
    assert len(every) == 5 and [n["code"] for n in every[-1]["notes"]] == ["EndByEndTime"]


def test_the_preview_exists_in_the_newer_version_only_and_checks_its_parameters(settings, clock) -> None:
    rt = Runtime.create(settings, clock)
    make_collection(rt)
    assert (
        call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            "j",
            {"properties": {"action": ACTION, "recurrence": {"frequency": "Hour"}}},
        ).status
        == 201
    )
    old = call(rt, "Jobs_ListOccurrences", "GET", "j")
    assert old.status == 400 and PREVIEW_API_VERSION in old.body["error"]["message"]
    for query in ({"count": "0"}, {"count": "1001"}, {"count": "x"}, {"from": "tomorrow"}):
        assert call(rt, "Jobs_ListOccurrences", "GET", "j", query={**NEWER, **query}).status == 400
    assert call(rt, "Jobs_ListOccurrences", "GET", "missing", query=NEWER).status == 404
