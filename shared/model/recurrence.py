"""JobRecurrence on the wire, and its translation to the pure recurrence engine."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from .base import CamelCaseOnOutput, ScalarOrList, WireModel
from .enums import DayOfWeek, RecurrenceFrequency
from .instants import UtcDateTime


def _one_when_null(value: object) -> object:
    return 1 if value is None else value


Minute = Annotated[int, Field(ge=0, le=59)]
Hour = Annotated[int, Field(ge=0, le=23)]
MonthDay = Annotated[int, Field(ge=-31, le=31)]


class JobRecurrenceScheduleMonthlyOccurrence(WireModel):
    day: Annotated[DayOfWeek, CamelCaseOnOutput]
    # The spec and every SDK spell it with a capital O; the docs and the live service used lowercase.
    occurrence: Annotated[int, Field(ge=-5, le=5)] | None = Field(default=None, alias="Occurrence")


class JobRecurrenceSchedule(WireModel):
    minutes: Annotated[list[Minute], ScalarOrList] | None = None
    hours: Annotated[list[Hour], ScalarOrList] | None = None
    week_days: list[Annotated[DayOfWeek, CamelCaseOnOutput]] | None = Field(default=None, alias="weekDays")
    month_days: Annotated[list[MonthDay], ScalarOrList] | None = Field(default=None, alias="monthDays")
    monthly_occurrences: list[JobRecurrenceScheduleMonthlyOccurrence] | None = Field(
        default=None, alias="monthlyOccurrences"
    )

    def is_empty(self) -> bool:
        """`{}` means no schedule (docs/decisions.md, Q10)."""
        return not (self.minutes or self.hours or self.week_days or self.month_days or self.monthly_occurrences)


class JobRecurrence(WireModel):
    frequency: Annotated[RecurrenceFrequency, CamelCaseOnOutput]
    count: Annotated[int, Field(ge=1, le=2147483647)] | None = None
    end_time: UtcDateTime | None = Field(default=None, alias="endTime")
    # Absent (or null) reads as 1, and the answer carries it, as the real service's did (docs/wire-contract.md §2.12).
    interval: Annotated[int, BeforeValidator(_one_when_null), Field(ge=1)] = 1
    schedule: JobRecurrenceSchedule | None = None
    time_zone: str | None = Field(
        default=None,
        alias="timeZone",
        description="Extension: an IANA time zone; schedule hours and days are wall-clock times there.",
    )
