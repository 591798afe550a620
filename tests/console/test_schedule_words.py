"""The schedule in words (shared/console/schedule.py): the phrases the console and the CLI show."""

from __future__ import annotations

import pytest

from shared.console.schedule import ScheduleError, describe

START = "2026-03-04T07:30:00Z"  # a Wednesday


@pytest.mark.parametrize(
    ("recurrence", "words"),
    [
        (None, "once at 2026-03-04 07:30 UTC"),
        ({"frequency": "Minute", "interval": 5}, "every 5 minutes"),
        ({"frequency": "hour"}, "every hour"),
        ({"frequency": "Day", "count": 3}, "every day at 07:30 UTC, 3 times"),
        ({"frequency": "Week"}, "every week on Wednesday at 07:30 UTC"),
        (
            {
                "frequency": "Week",
                "schedule": {"weekDays": ["Monday", "Friday"], "hours": [9], "minutes": [0]},
                "timeZone": "Europe/London",
            },
            "every Monday and Friday at 09:00 Europe/London",
        ),
        (
            {"frequency": "Week", "interval": 2, "schedule": {"weekDays": ["Monday"]}},
            "every 2 weeks on Monday at 07:30 UTC",
        ),
        (
            {"frequency": "Month", "schedule": {"monthDays": [1, -1], "hours": [6]}},
            "every month on the 1st and the last day at 06:30 UTC",
        ),
        (
            {
                "frequency": "Month",
                "schedule": {
                    "monthlyOccurrences": [{"day": "Monday", "occurrence": 1}, {"day": "friday", "Occurrence": -1}]
                },
            },
            "every month on the first Monday and the last Friday at 07:30 UTC",
        ),
        ({"frequency": "Hour", "schedule": {"minutes": [0, 30]}}, "every hour at minutes 0 and 30 past the hour"),
        ({"frequency": "Day", "endTime": "2026-12-31T00:00:00Z"}, "every day at 07:30 UTC, until 2026-12-31 00:00 UTC"),
        (
            {"frequency": "Day", "endTime": "2026-12-31T00:00:00Z", "timeZone": "America/New_York"},
            "every day at 02:30 America/New_York, until 2026-12-30 19:00 America/New_York",
        ),
    ],
)
def test_phrases(recurrence, words) -> None:
    assert describe(START, recurrence) == words


def test_invalid_input_names_the_property() -> None:
    with pytest.raises(ScheduleError) as error:
        describe(START, {"frequency": "Week", "schedule": {"hours": [25]}})
    assert error.value.path == "properties.recurrence.schedule.hours[0]"
    with pytest.raises(ScheduleError) as zone:
        describe(START, {"frequency": "Day", "timeZone": "Mars/Olympus"})
    assert zone.value.path == "properties.recurrence.timeZone"
