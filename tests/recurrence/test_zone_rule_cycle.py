"""A zone's clock changes far ahead come from its rule's 400-year cycle (shared/recurrence/clock.py): the changes
found for a year from 2500 on are those its own probing finds, for rules of each kind (both hemispheres, a
30-minute change, a negative DST, Morocco's listed Ramadan changes that end in the 2080s)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from shared.recurrence.clock import LAST_INSTANT, ZoneClock, _changes_in_year, _probed

ZONES = (
    "America/New_York",
    "Europe/Berlin",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Europe/Dublin",
    "Africa/Casablanca",
    "Pacific/Apia",
)
YEARS = (2500, 2501, 2899, 2900, 3000, 4321, 6000, 9998)


@pytest.mark.parametrize("zone", ZONES)
def test_the_changes_of_a_far_year_are_those_probing_finds(zone: str) -> None:
    clock = ZoneClock(ZoneInfo(zone))
    changes = 0
    for year in YEARS:
        from_cycle = _changes_in_year(clock, year)
        assert from_cycle == _probed(clock, year), year
        changes += len(from_cycle[0]) + len(from_cycle[1])
    if zone not in ("Africa/Casablanca", "Pacific/Apia"):  # no DST in their rules today
        assert changes == 2 * len(YEARS)  # a gap and a fold a year: the comparison compared changes


def test_a_query_across_the_calendar_in_a_dst_zone_lists_a_change_a_year_in_order() -> None:
    clock = ZoneClock(ZoneInfo("America/New_York"))
    gaps = clock.gaps(0, LAST_INSTANT)  # 1970 to the last second of 9999
    assert len(gaps) > 7_900  # one a year since DST began (1918, with breaks)
    assert all(earlier[0] < later[0] for earlier, later in zip(gaps, gaps[1:], strict=False))
