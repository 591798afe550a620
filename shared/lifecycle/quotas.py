"""Plans and quotas: how many jobs a collection holds, how often they may run, outbound authentication.

docs/decisions.md: Free 5 jobs, at most hourly, no outbound authentication, one per subscription;
Standard 50 per minute; P10Premium 50; P20Premium 1000. `quota.maxJobCount` and
`quota.maxRecurrence` may tighten the plan, never loosen it. Exceeding count or frequency is QuotaExceeded (a 409);
frequency is the smallest gap between two consecutive occurrences of the expanded schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ..model import (
    HttpAuthenticationType,
    JobCollectionDefinition,
    JobErrorAction,
    JobProperties,
    RecurrenceFrequency,
    SkuName,
)
from ..recurrence import OccurrenceSeries
from .errors import QuotaExceeded


@dataclass(frozen=True)
class Limits:
    sku: SkuName
    max_jobs: int
    min_gap: timedelta
    outbound_auth: bool


SKU_LIMITS = {
    SkuName.FREE: Limits(SkuName.FREE, 5, timedelta(hours=1), outbound_auth=False),
    SkuName.STANDARD: Limits(SkuName.STANDARD, 50, timedelta(minutes=1), outbound_auth=True),
    SkuName.P10_PREMIUM: Limits(SkuName.P10_PREMIUM, 50, timedelta(minutes=1), outbound_auth=True),
    SkuName.P20_PREMIUM: Limits(SkuName.P20_PREMIUM, 1000, timedelta(minutes=1), outbound_auth=True),
}

# Nominal lengths for a maxRecurrence quota; a month counts as its shortest, so a monthly job fits a
# monthly quota although February is shorter than the other months.
_NOMINAL = {
    RecurrenceFrequency.MINUTE: timedelta(minutes=1),
    RecurrenceFrequency.HOUR: timedelta(hours=1),
    RecurrenceFrequency.DAY: timedelta(days=1),
    RecurrenceFrequency.WEEK: timedelta(weeks=1),
    RecurrenceFrequency.MONTH: timedelta(days=28),
    RecurrenceFrequency.YEAR: timedelta(days=365),
}


def sku_of(definition: JobCollectionDefinition) -> SkuName:
    """The collection's plan; a collection created without a SKU is Standard."""
    properties = definition.properties
    sku = properties.sku if properties else None
    return sku.name if sku and sku.name else SkuName.STANDARD


def limits_of(definition: JobCollectionDefinition) -> Limits:
    """The plan's limits, tightened by the collection's quota."""
    plan = SKU_LIMITS[sku_of(definition)]
    quota = definition.properties.quota if definition.properties else None
    max_jobs, min_gap = plan.max_jobs, plan.min_gap
    if quota is not None:
        if quota.max_job_count is not None:
            max_jobs = min(max_jobs, quota.max_job_count)
        recurrence = quota.max_recurrence
        if recurrence is not None and recurrence.frequency is not None:
            try:
                quota_gap = _NOMINAL[recurrence.frequency] * (recurrence.interval or 1)
            except OverflowError:  # an interval beyond timedelta's range allows no recurring job at all
                quota_gap = timedelta.max
            min_gap = max(min_gap, quota_gap)
    return Limits(plan.sku, max_jobs, min_gap, plan.outbound_auth)


def _describe(gap: timedelta) -> str:
    seconds = int(gap.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def _authenticated(action: JobErrorAction | None) -> bool:
    auth = action.request.authentication if action and action.request else None
    return auth is not None and auth.type != HttpAuthenticationType.NOT_SPECIFIED


def check_job(limits: Limits, properties: JobProperties, series: OccurrenceSeries | None, name: str) -> None:
    """QuotaExceeded when the job recurs more often than the collection allows, or authenticates on a Free plan."""
    recurrence = properties.recurrence
    gap = series.min_gap() if series is not None and recurrence is not None and recurrence.count != 1 else None
    if gap is not None and gap < limits.min_gap:
        raise QuotaExceeded(
            f"properties.recurrence: job '{name}' would run every {_describe(gap)} at the shortest, more often "
            f"than its job collection allows (at most once every {_describe(limits.min_gap)})."
        )
    if not limits.outbound_auth:
        action = properties.action
        for path, target in (
            ("properties.action", action),
            ("properties.action.errorAction", action.error_action if action else None),
        ):
            if _authenticated(target):
                raise QuotaExceeded(
                    f"{path}.request.authentication: job '{name}' uses outbound authentication, which the "
                    f"{limits.sku.value} plan does not allow."
                )


def check_job_count(limits: Limits, current: int) -> None:
    """QuotaExceeded when a collection already holding `current` jobs cannot take one more."""
    if current >= limits.max_jobs:
        raise QuotaExceeded(
            f"The job collection holds {current} jobs, its maximum (maxJobCount {limits.max_jobs} on the "
            f"{limits.sku.value} plan); delete a job or raise the quota first."
        )
