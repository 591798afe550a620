"""SCHEDULER_CLOCK_OFFSET_SECONDS: how far the local host's clock runs from real time, for process-level tests.

`python -m devhost --clock-offset SECONDS` (or `--start-at INSTANT`) sets it; the local host's timers and the app's
runtime clock (shared/runtime.py, `OffsetClock` in shared/clock.py) then both read real time + this offset, so a test
can start a host a few seconds before a minute tick instead of waiting for the real one. Only "now" moves: every
delay the app sends (queue visibility, leases) is relative, and storage keeps its own real timestamps.

Contract of `clock_offset(env)`:
- unset or blank: no offset (timedelta 0);
- a number of seconds, negative or positive, decimals allowed, at most `MOST_SECONDS` either way; anything else
  raises ConfigurationError naming the setting;
- a non-zero offset with storage other than development storage (Azurite's account) raises ConfigurationError:
  local only. The Functions host in Azure does not apply it (its timers fire at the real minute), so a deployment
  taking it would tick at one minute and reckon due times in another; a setting the server does not apply is
  refused, never ignored. Azure never runs on the development account, so this refuses every deployment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta

from .reading import ConfigurationError
from .storage import DEVELOPMENT_ACCOUNT_NAME, StorageSettings

CLOCK_OFFSET_SETTING = "SCHEDULER_CLOCK_OFFSET_SECONDS"
MOST_SECONDS = 100 * 366 * 86_400  # a century either way keeps every instant of the app far inside datetime's range


def clock_offset(env: Mapping[str, str]) -> timedelta:
    """The offset `env` sets (see the module's contract)."""
    text = (env.get(CLOCK_OFFSET_SETTING) or "").strip()
    if not text:
        return timedelta(0)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not -MOST_SECONDS <= seconds <= MOST_SECONDS:  # NaN included
        raise ConfigurationError(
            f"{CLOCK_OFFSET_SETTING} must be a number of seconds from -{MOST_SECONDS} to {MOST_SECONDS}"
        )
    if seconds and StorageSettings.from_environment(env).account_name != DEVELOPMENT_ACCOUNT_NAME:
        raise ConfigurationError(
            f"{CLOCK_OFFSET_SETTING} is for the local host only (`python -m devhost --clock-offset`, on Azurite): "
            "the Functions host's timers do not follow it; remove the setting"
        )
    return timedelta(seconds=seconds)
