"""How a setting's text is read: what every reader of the app settings (shared/settings/) raises, and the parse
of a whole number in a range that several settings share.

A setting that is missing when required, or malformed, raises ConfigurationError naming the setting; its message
never echoes the value (a connection string holds a key). An unset or blank number setting is its default.
"""

from __future__ import annotations

from collections.abc import Mapping


class ConfigurationError(RuntimeError):
    """A required app setting is missing or malformed; the message names the setting."""


def whole_number(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The setting `name`, a whole number from `low` to `high`; `default` when unset or blank."""
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise ConfigurationError(f"{name} must be a whole number from {low} to {high}")
    return int(text)
