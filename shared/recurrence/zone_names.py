"""Time zone names for people: which IANA names the engine takes, what a refused name most likely meant, and
what a legacy name accepted for the wire contract really does.

Contract:
- `iana_names()`: the IANA zones of the installed tz database, without the host's own entries (`localtime`,
  `posixrules`, `Factory`) and the `posix/` and `right/` copies. The API takes exactly these (validation.py);
  names are case-sensitive, as in the tz database.
- `zone_hint(name)`: for a refused name, what to write instead, naming the zone when one is likely: the IANA name
  differing only in case ("did you mean 'Europe/Berlin'?"), the IANA name of a common Windows zone name
  (`WINDOWS_ZONES`: Unicode CLDR's windowsZones, territory 001, for the common ones), a near spelling, else an
  example.
- `legacy_warning(name)`: for an accepted name that is a fixed offset or US-only rule set kept by the tz
  database for compatibility (EST, MST, HST, EST5EDT..., Etc/GMT+5), one sentence saying so and naming the zone
  people usually mean; None for every other name. The API accepts them as it always did (docs/decisions.md,
  "Recurrence"); the CLI warns.
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from zoneinfo import available_timezones

__all__ = ["WINDOWS_ZONES", "iana_names", "legacy_warning", "zone_hint"]

# Files a system zone directory holds beside the IANA zones; available_timezones() may list them.
_HOST_ENTRIES = frozenset({"localtime", "posixrules", "Factory"})

# Windows zone id -> IANA zone (CLDR windowsZones.xml, territory 001), the common ones.
WINDOWS_ZONES: dict[str, str] = {
    "Dateline Standard Time": "Etc/GMT+12",
    "Hawaiian Standard Time": "Pacific/Honolulu",
    "Alaskan Standard Time": "America/Anchorage",
    "Pacific Standard Time": "America/Los_Angeles",
    "Pacific Standard Time (Mexico)": "America/Tijuana",
    "US Mountain Standard Time": "America/Phoenix",
    "Mountain Standard Time": "America/Denver",
    "Central America Standard Time": "America/Guatemala",
    "Central Standard Time": "America/Chicago",
    "Central Standard Time (Mexico)": "America/Mexico_City",
    "Canada Central Standard Time": "America/Regina",
    "SA Pacific Standard Time": "America/Bogota",
    "Eastern Standard Time": "America/New_York",
    "US Eastern Standard Time": "America/Indiana/Indianapolis",
    "Venezuela Standard Time": "America/Caracas",
    "Atlantic Standard Time": "America/Halifax",
    "SA Western Standard Time": "America/La_Paz",
    "Pacific SA Standard Time": "America/Santiago",
    "Newfoundland Standard Time": "America/St_Johns",
    "E. South America Standard Time": "America/Sao_Paulo",
    "Argentina Standard Time": "America/Argentina/Buenos_Aires",
    "Montevideo Standard Time": "America/Montevideo",
    "Azores Standard Time": "Atlantic/Azores",
    "Cape Verde Standard Time": "Atlantic/Cape_Verde",
    "GMT Standard Time": "Europe/London",
    "Greenwich Standard Time": "Atlantic/Reykjavik",
    "Morocco Standard Time": "Africa/Casablanca",
    "W. Europe Standard Time": "Europe/Berlin",
    "Central Europe Standard Time": "Europe/Budapest",
    "Romance Standard Time": "Europe/Paris",
    "Central European Standard Time": "Europe/Warsaw",
    "W. Central Africa Standard Time": "Africa/Lagos",
    "GTB Standard Time": "Europe/Bucharest",
    "FLE Standard Time": "Europe/Kyiv",
    "E. Europe Standard Time": "Europe/Chisinau",
    "Egypt Standard Time": "Africa/Cairo",
    "South Africa Standard Time": "Africa/Johannesburg",
    "Israel Standard Time": "Asia/Jerusalem",
    "Jordan Standard Time": "Asia/Amman",
    "Middle East Standard Time": "Asia/Beirut",
    "Turkey Standard Time": "Europe/Istanbul",
    "Kaliningrad Standard Time": "Europe/Kaliningrad",
    "Belarus Standard Time": "Europe/Minsk",
    "Russian Standard Time": "Europe/Moscow",
    "Arabic Standard Time": "Asia/Baghdad",
    "Arab Standard Time": "Asia/Riyadh",
    "E. Africa Standard Time": "Africa/Nairobi",
    "Iran Standard Time": "Asia/Tehran",
    "Arabian Standard Time": "Asia/Dubai",
    "Georgian Standard Time": "Asia/Tbilisi",
    "Afghanistan Standard Time": "Asia/Kabul",
    "Pakistan Standard Time": "Asia/Karachi",
    "West Asia Standard Time": "Asia/Tashkent",
    "India Standard Time": "Asia/Kolkata",
    "Sri Lanka Standard Time": "Asia/Colombo",
    "Nepal Standard Time": "Asia/Kathmandu",
    "Bangladesh Standard Time": "Asia/Dhaka",
    "Myanmar Standard Time": "Asia/Yangon",
    "SE Asia Standard Time": "Asia/Bangkok",
    "China Standard Time": "Asia/Shanghai",
    "Singapore Standard Time": "Asia/Singapore",
    "Taipei Standard Time": "Asia/Taipei",
    "W. Australia Standard Time": "Australia/Perth",
    "Tokyo Standard Time": "Asia/Tokyo",
    "Korea Standard Time": "Asia/Seoul",
    "Cen. Australia Standard Time": "Australia/Adelaide",
    "AUS Central Standard Time": "Australia/Darwin",
    "E. Australia Standard Time": "Australia/Brisbane",
    "AUS Eastern Standard Time": "Australia/Sydney",
    "Tasmania Standard Time": "Australia/Hobart",
    "New Zealand Standard Time": "Pacific/Auckland",
    "Fiji Standard Time": "Pacific/Fiji",
    "Tonga Standard Time": "Pacific/Tongatapu",
    "Samoa Standard Time": "Pacific/Apia",
    "Line Islands Standard Time": "Pacific/Kiritimati",
}

# Fixed offsets and US-only rule sets the tz database keeps for old software: (what it is, the zone meant).
_LEGACY = {
    "EST": ("a fixed UTC-5 with no daylight saving", "for New York use America/New_York"),
    "MST": ("a fixed UTC-7 with no daylight saving", "for Denver use America/Denver (Arizona: America/Phoenix)"),
    "HST": ("a fixed UTC-10 with no daylight saving", "for Honolulu use Pacific/Honolulu"),
    "EST5EDT": ("the US Eastern rules without local history", "for New York use America/New_York"),
    "CST6CDT": ("the US Central rules without local history", "for Chicago use America/Chicago"),
    "MST7MDT": ("the US Mountain rules without local history", "for Denver use America/Denver"),
    "PST8PDT": ("the US Pacific rules without local history", "for Los Angeles use America/Los_Angeles"),
}
_ETC_OFFSET = re.compile(r"^Etc/GMT([+-])(\d{1,2})$")


@cache
def iana_names() -> frozenset[str]:
    return frozenset(
        name
        for name in available_timezones()
        if name not in _HOST_ENTRIES and not name.startswith(("posix/", "right/"))
    )


@cache
def _folded() -> dict[str, str]:
    return {known.casefold(): known for known in iana_names()}


def zone_hint(name: str) -> str:
    """What to write instead of a refused `name` (see the module contract)."""
    text = " ".join(name.split())
    if (known := _folded().get(text.casefold())) is not None:
        return f"names are case-sensitive: did you mean {known!r}?"
    windows = {key.casefold(): value for key, value in WINDOWS_ZONES.items()}
    if (iana := windows.get(text.casefold())) is not None:
        return f"a Windows zone name; use its IANA name: did you mean {iana!r}?"
    if text.casefold().endswith(" standard time"):
        return (
            "a Windows zone name; use its IANA name (Unicode CLDR's windowsZones table maps them: "
            "'W. Europe Standard Time' is 'Europe/Berlin')"
        )
    near = difflib.get_close_matches(text.casefold(), list(_folded()), n=1, cutoff=0.85)
    if near:
        return f"did you mean {_folded()[near[0]]!r}?"
    return "use an IANA name such as 'Europe/London'"


def legacy_warning(name: str | None) -> str | None:
    """One sentence for a legacy fixed-offset or US-only name (see the module contract); None otherwise."""
    if not name:
        return None
    if name in _LEGACY:
        what, meant = _LEGACY[name]
        return f"{name} is {what}; {meant}"
    found = _ETC_OFFSET.match(name)
    if found and found.group(2) != "0":
        # POSIX signs: Etc/GMT+5 is five hours behind UTC.
        offset = f"UTC{'-' if found.group(1) == '+' else '+'}{int(found.group(2))}"
        return f"{name} is a fixed {offset} (POSIX signs are inverted) with no daylight saving; use the city's zone"
    return None
