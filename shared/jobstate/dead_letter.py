"""When an occurrence goes to its collection's dead-letter list: one pure rule, beside `decide` (attempt.py).

Rule (docs/decisions.md, "Dead letters"): an occurrence is dead-lettered when its run ends failed for good with
nothing left to handle it:
- its main action failed for good (its retries spent) and the job has no error action (Outcome.FAULTED), or
- its error action ended failed for good (Outcome.ERROR_ACTION_DONE on a failed attempt).
An error action that succeeded handled the failure: not a dead letter. A retry or the error action still to
come is not an end: nothing yet.

A replay of a dead letter (shared/store/dead_letters.py) ends the same way: dead-lettered again with its new
outcome, or Resolved when it succeeded (or its error action did); the dead letter is kept, with that outcome,
until it is purged or retention prunes it. Anything else leaves no dead-letter row (a successful occurrence
costs nothing).
"""

from __future__ import annotations

from enum import Enum

from .attempt import Outcome


class Capture(str, Enum):
    NONE = "none"  # nothing to write
    DEAD = "DeadLettered"  # the run ended failed for good: the dead letter is written (again)
    RESOLVED = "Resolved"  # a replay's run ended well: its dead letter says so


def capture(kind: Outcome, succeeded: bool, replay: bool) -> Capture:
    """What an attempt that ended with `kind` (`succeeded`: its action's answer) leaves in the dead-letter list;
    `replay`: the attempt belongs to a replay of a dead letter."""
    if kind.follows:
        return Capture.NONE  # a retry or the error action comes next
    failed = kind == Outcome.FAULTED or (kind == Outcome.ERROR_ACTION_DONE and not succeeded)
    if failed:
        return Capture.DEAD
    return Capture.RESOLVED if replay else Capture.NONE
