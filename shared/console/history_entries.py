"""Reading a job's history entries (wire documents, as the API answers them) leniently, for the console and the CLI.

An entry comes from a client, so nothing in it is trusted to be there or to be of its type: `properties(entry)` is
its `properties` object (empty when it has none), `time(value)` an instant (None unless an ISO 8601 string; a time
without a zone is UTC), `count(value)` a whole number (0 unless an integer; a boolean is not one). `same(a, b)` is
whether two instants are one (storage may round what one record wrote to two rows alike, never by more than
SAME); an unknown instant is the same as none.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

SAME = timedelta(milliseconds=1)
MAIN, ERROR = "mainaction", "erroraction"  # an entry's `actionName`, lower-cased
EARLIEST = datetime.min.replace(tzinfo=UTC)


def properties(entry: Any) -> dict[str, Any]:
    found = entry.get("properties") if isinstance(entry, dict) else None
    return found if isinstance(found, dict) else {}


def time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def same(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= SAME
