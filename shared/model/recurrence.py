"""JobRecurrence on the wire, and its translation to the pure recurrence engine."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .base import CamelCaseOnOutput, ScalarOrList, WireModel
from .enums import DayOfWeek, RecurrenceFrequency
from .instants import UtcDateTime
from .occurrence_control import DstPolicy


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
    # Declared first so that `frequency`'s check sees it (fields validate in order); absent, it is not rendered.
    cron: str | None = Field(
        default=None,
        description="Extension: five cron fields (minute hour day-of-month month day-of-week) or a macro such as "
        "@daily, on the wall clock of timeZone (UTC without one), instead of frequency, interval and schedule.",
    )
    # Required unless `cron` is given (the old service required it: its message for a missing one is kept).
    frequency: Annotated[RecurrenceFrequency, CamelCaseOnOutput] | None = Field(default=None, validate_default=True)
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
    dst_policy: DstPolicy | None = Field(
        default=None,
        alias="dstPolicy",
        description="Extension (with timeZone only): what runs when a DST change skips or repeats a wall time.",
    )

    @field_validator("frequency")
    @classmethod
    def _frequency_or_cron(cls, value: RecurrenceFrequency | None, info: ValidationInfo) -> RecurrenceFrequency | None:
        if value is None and info.data.get("cron") is None:
            raise PydanticCustomError("missing", "Field required")
        return value

    @model_validator(mode="after")
    def _cron_alone(self) -> JobRecurrence:
        # `interval` 1 is what every answer carries (absent reads as 1), so a read-back cron job writes back.
        schedule = self.schedule is not None and not self.schedule.is_empty()
        if self.cron is not None and (self.frequency is not None or schedule or self.interval != 1):
            raise ValueError("A recurrence with cron has no frequency, interval or schedule: cron says it all.")
        return self
