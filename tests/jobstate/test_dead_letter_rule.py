"""The dead-letter rule (jobstate/dead_letter.py), row by row: a run that ended failed for good with nothing left
to handle it is dead-lettered; an error action that succeeded handled it; a replay's good end resolves it; nothing
that is followed by another attempt decides anything. And through `decide`: the rule sees what the executor sees."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.jobstate import Outcome, decide
from shared.jobstate.dead_letter import Capture, capture
from shared.retry import EffectiveRetry


@pytest.mark.parametrize(
    ("kind", "succeeded", "replay", "expected"),
    [
        (Outcome.SUCCEEDED, True, False, Capture.NONE),  # a success costs nothing
        (Outcome.SUCCEEDED, True, True, Capture.RESOLVED),
        (Outcome.RETRY, False, False, Capture.NONE),
        (Outcome.RETRY, False, True, Capture.NONE),
        (Outcome.ERROR_ACTION, False, False, Capture.NONE),  # the error action may still handle it
        (Outcome.FAULTED, False, False, Capture.DEAD),  # retries spent, no error action
        (Outcome.FAULTED, False, True, Capture.DEAD),  # a replay that failed again
        (Outcome.ERROR_ACTION_DONE, True, False, Capture.NONE),  # the error action handled it
        (Outcome.ERROR_ACTION_DONE, True, True, Capture.RESOLVED),
        (Outcome.ERROR_ACTION_DONE, False, False, Capture.DEAD),  # the error action failed too
    ],
)
def test_capture(kind: Outcome, succeeded: bool, replay: bool, expected: Capture) -> None:
    assert capture(kind, succeeded, replay) is expected


NO_RETRY = EffectiveRetry(0, timedelta(0))
TWO_RETRIES = EffectiveRetry(2, timedelta(seconds=30))


def test_the_rule_over_what_decide_answers() -> None:
    def dead(succeeded: bool, attempt: int, retry: EffectiveRetry, error_action: bool, is_error: bool) -> bool:
        outcome = decide(
            succeeded=succeeded, is_error_action=is_error, attempt=attempt, retry=retry, has_error_action=error_action
        )
        return capture(outcome.kind, succeeded, False) is Capture.DEAD

    assert dead(False, 0, NO_RETRY, error_action=False, is_error=False)
    assert not dead(False, 1, TWO_RETRIES, error_action=False, is_error=False)  # a retry left
    assert dead(False, 2, TWO_RETRIES, error_action=False, is_error=False)
    assert not dead(False, 0, NO_RETRY, error_action=True, is_error=False)  # the error action comes next
    assert not dead(True, 0, NO_RETRY, error_action=True, is_error=True)  # it handled the failure
    assert dead(False, 0, NO_RETRY, error_action=True, is_error=True)
    assert not dead(False, 0, TWO_RETRIES, error_action=True, is_error=True)  # the error action retries first
