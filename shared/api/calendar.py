"""Calendar arithmetic the API's limits need ("18 months ahead")."""

from __future__ import annotations

import calendar
from datetime import datetime


def add_months(instant: datetime, months: int) -> datetime:
    """The same wall time `months` later, clamped to the month's last day (Jan 31 + 1 month = Feb 28/29)."""
    total = instant.month - 1 + months
    year, month = instant.year + total // 12, total % 12 + 1
    day = min(instant.day, calendar.monthrange(year, month)[1])
    return instant.replace(year=year, month=month, day=day)
