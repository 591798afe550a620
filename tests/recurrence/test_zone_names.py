"""Time zone names for people (shared/recurrence/zone_names.py): a refused name's message names the zone likely
meant, every Windows zone the table maps goes to a zone the API takes, and the legacy names the API accepts for the
wire contract (EST: a fixed UTC-5) are told apart from the zones people mean."""

from __future__ import annotations

import pytest

from shared.recurrence.errors import RecurrenceError
from shared.recurrence.validation import load_zone
from shared.recurrence.zone_names import WINDOWS_ZONES, iana_names, legacy_warning, zone_hint


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("europe/berlin", "names are case-sensitive: did you mean 'Europe/Berlin'?"),
        ("AMERICA/NEW_YORK", "names are case-sensitive: did you mean 'America/New_York'?"),
        ("W. Europe Standard Time", "a Windows zone name; use its IANA name: did you mean 'Europe/Berlin'?"),
        ("pacific standard time", "a Windows zone name; use its IANA name: did you mean 'America/Los_Angeles'?"),
        ("Europe/Berln", "did you mean 'Europe/Berlin'?"),
        ("Nowhere Standard Time", "a Windows zone name; use its IANA name (Unicode CLDR's windowsZones"),
        ("Mars/Olympus_Mons", "use an IANA name such as 'Europe/London'"),
    ],
)
def test_a_refused_name_is_told_the_zone_it_likely_meant(name: str, hint: str) -> None:
    assert zone_hint(name).startswith(hint)
    with pytest.raises(RecurrenceError) as refused:
        load_zone(name)
    assert refused.value.message == f"unknown time zone {name!r}: {zone_hint(name)}"


def test_every_windows_zone_maps_to_a_zone_the_api_takes() -> None:
    assert not [iana for iana in WINDOWS_ZONES.values() if iana not in iana_names()]


@pytest.mark.parametrize(
    ("name", "warning"),
    [
        ("EST", "EST is a fixed UTC-5 with no daylight saving; for New York use America/New_York"),
        (
            "MST",
            "MST is a fixed UTC-7 with no daylight saving; for Denver use America/Denver (Arizona: America/Phoenix)",
        ),
        ("HST", "HST is a fixed UTC-10 with no daylight saving; for Honolulu use Pacific/Honolulu"),
        ("EST5EDT", "EST5EDT is the US Eastern rules without local history; for New York use America/New_York"),
        ("Etc/GMT+5", "Etc/GMT+5 is a fixed UTC-5 (POSIX signs are inverted) with no daylight saving; use the city's"),
        ("Europe/Berlin", None),
        ("Etc/GMT", None),
        ("UTC", None),
    ],
)
def test_a_legacy_name_is_accepted_and_said_for_what_it_is(name: str, warning: str | None) -> None:
    load_zone(name)  # the API takes it, as it always did
    found = legacy_warning(name)
    assert found == warning if warning is None else found is not None and found.startswith(warning)
