"""Retry policies: how many more attempts an action gets after a failure, and when.

docs/decisions.md: no retryPolicy, or Fixed without values, means 30 s x 4 for the main action (applied,
never echoed); an error action without a policy is not retried. Extension: Exponential doubles the
interval per retry, capped by maxRetryInterval (default 1 hour).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from .model import (
    DEFAULT_MAX_RETRY_INTERVAL,
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_INTERVAL,
    RetryPolicy,
    RetryType,
)


@dataclass(frozen=True)
class EffectiveRetry:
    retries: int
    interval: timedelta
    exponential: bool = False
    max_interval: timedelta = DEFAULT_MAX_RETRY_INTERVAL

    def delay(self, attempt: int) -> timedelta:
        """Wait before retry number `attempt + 1`, after attempt `attempt` (0-based) failed."""
        if not self.exponential:
            return self.interval
        return min(self.interval * (2 ** min(attempt, 40)), self.max_interval)


NO_RETRY = EffectiveRetry(0, timedelta(0))


def effective_retry(policy: RetryPolicy | None, default: EffectiveRetry | None) -> EffectiveRetry:
    """`default` applies when no policy is given (the main action's 30 s x 4, or none for an error action)."""
    if policy is None or policy.retry_type is None:
        return default or NO_RETRY
    if policy.retry_type == RetryType.NONE:
        return NO_RETRY
    return EffectiveRetry(
        retries=DEFAULT_RETRY_COUNT if policy.retry_count is None else policy.retry_count,
        interval=policy.retry_interval or DEFAULT_RETRY_INTERVAL,
        exponential=policy.retry_type == RetryType.EXPONENTIAL,
        max_interval=policy.max_retry_interval or DEFAULT_MAX_RETRY_INTERVAL,
    )


MAIN_ACTION_DEFAULT = EffectiveRetry(DEFAULT_RETRY_COUNT, DEFAULT_RETRY_INTERVAL)
