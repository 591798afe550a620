"""Azure region names: ARM answers with the display name (`westus` came back as `West US`, wire-contract.md §1.4)."""

from __future__ import annotations

_DISPLAY_NAMES = (
    "East US",
    "East US 2",
    "West US",
    "West US 2",
    "West US 3",
    "Central US",
    "North Central US",
    "South Central US",
    "West Central US",
    "Canada Central",
    "Canada East",
    "Brazil South",
    "Mexico Central",
    "North Europe",
    "West Europe",
    "UK South",
    "UK West",
    "France Central",
    "Germany West Central",
    "Switzerland North",
    "Norway East",
    "Sweden Central",
    "Poland Central",
    "Italy North",
    "Spain Central",
    "East Asia",
    "Southeast Asia",
    "Japan East",
    "Japan West",
    "Korea Central",
    "Korea South",
    "Central India",
    "South India",
    "West India",
    "Australia East",
    "Australia Southeast",
    "Australia Central",
    "UAE North",
    "South Africa North",
    "Qatar Central",
    "Israel Central",
)

# "westus", "West US" and "west us" all name the same region.
_BY_KEY = {name.replace(" ", "").lower(): name for name in _DISPLAY_NAMES}


def display_location(location: str) -> str:
    """The display name of a known region; anything else is echoed as sent (a private or local cloud)."""
    return _BY_KEY.get(location.replace(" ", "").lower(), location)


def same_location(a: str | None, b: str | None) -> bool:
    return (display_location(a) if a else None) == (display_location(b) if b else None)
