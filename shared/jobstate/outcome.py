"""What follows an attempt: one pure decision, named, with no storage and no clock.

`decide` is the only place that answers "the attempt succeeded or failed: now what?". It returns an
`AttemptOutcome` (its `kind` a named `Outcome`); the executor turns that into writes (a follow-up
message, counters, the job's final state). Table-driven tests (tests/executor/test_decide.py) pin every
row without storage.

Rules (docs/decisions.md): a failed action is retried while its retry policy has retries left; when they
run out, the main action's error action (if any) runs next, itself under its own policy (by default not
retried). An occurrence faults once, when its main action's retries run out; a job whose last occurrence
ends becomes Completed, or Faulted when that occurrence's main action failed for good.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from ..retry import EffectiveRetry


class Outcome(str, Enum):
    """What follows an attempt, as a named value (its `.value` is what telemetry and logs show)."""

    SUCCEEDED = "succeeded"  # the main action succeeded: the occurrence is done
    RETRY = "retry"  # failed, with retries left: the same action runs again after `delay`
    ERROR_ACTION = "error_action"  # the main action failed for good: the error action runs next
    FAULTED = "faulted"  # the main action failed for good, no error action: the occurrence is done, faulted
    ERROR_ACTION_DONE = "error_action_done"  # the error action ended (succeeded or out of retries)

    @property
    def follows(self) -> bool:
        """Another attempt of this occurrence follows (a retry or the error action)."""
        return self in (Outcome.RETRY, Outcome.ERROR_ACTION)

    @property
    def ends_occurrence(self) -> bool:
        return not self.follows


@dataclass(frozen=True)
class AttemptOutcome:
    kind: Outcome
    delay: timedelta = timedelta(0)  # before the follow-up (a retry's interval; none before an error action)
    # The occurrence faults with this attempt: faultedCount counts occurrences, once each.
    faults_occurrence: bool = False
    # When this attempt ends the job's last occurrence, the job becomes Faulted (else Completed).
    faults_job: bool = False


def decide(
    *, succeeded: bool, is_error_action: bool, attempt: int, retry: EffectiveRetry, has_error_action: bool
) -> AttemptOutcome:
    """What follows attempt number `attempt` (0-based) of an action under its effective retry policy."""
    if not succeeded and attempt < retry.retries:
        return AttemptOutcome(Outcome.RETRY, delay=retry.delay(attempt))
    if is_error_action:
        # The main action failed for good before the error action ran: the occurrence faulted already.
        return AttemptOutcome(Outcome.ERROR_ACTION_DONE, faults_job=True)
    if succeeded:
        return AttemptOutcome(Outcome.SUCCEEDED)
    if has_error_action:
        return AttemptOutcome(Outcome.ERROR_ACTION, faults_occurrence=True, faults_job=True)
    return AttemptOutcome(Outcome.FAULTED, faults_occurrence=True, faults_job=True)
