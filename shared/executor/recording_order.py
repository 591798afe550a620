"""The recorder's order as a table: the steps an attempt's recording takes and the moves between them.

The recorder (recorder.py) moves each attempt it holds through `MOVES`, one step as each write lands:

    answered -> history written [-> follow-up sent] -> job written [-> released] -> done
    any step before done -> failed

What the table keeps (tests/executor/test_recording_order.py asserts each):
- the history row and the follow-up (a retry, the error action) are written before the job write that marks the
  attempt done (`JobRecord.recent_claims`): a crash between them repeats a step, never loses one, since a worker
  that takes the attempt over once the job lists it only marks it done;
- a waiter's release (overlapPolicy BufferOne) is queued only after the job write that ends its occurrence landed
  (`released`: the release handed to the queue, best effort: a lost one comes back by itself);
- done and failed are ends: nothing moves after them, and the attempt's future ends with the move to either (its
  result, or its error), so no future ends off the table.

A move the table does not allow is a programming error of the recorder: `Recording.move` refuses it, logs it and
fails that attempt (its future raises `OutOfOrder`); it is never skipped silently, and the recorder goes on only
with the attempts that moved.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from enum import Enum

log = logging.getLogger(__name__)


class Step(str, Enum):
    """Where an attempt's recording stands (its `.value` is what logs show)."""

    ANSWERED = "answered"  # its action answered: handed to the recorder
    HISTORY_WRITTEN = "history written"  # its history row landed
    FOLLOW_UP_SENT = "follow-up sent"  # its retry or error action queued
    JOB_WRITTEN = "job written"  # its job lists it (counters, state, overlap marker): the attempt is done in storage
    RELEASED = "released"  # the waiter its end let go handed to the queue
    DONE = "done"  # its future ended with its result
    FAILED = "failed"  # its future ended with an error: the batch's copies bring the attempt back


MOVES: Mapping[Step, frozenset[Step]] = {
    Step.ANSWERED: frozenset({Step.HISTORY_WRITTEN, Step.FAILED}),
    Step.HISTORY_WRITTEN: frozenset({Step.FOLLOW_UP_SENT, Step.JOB_WRITTEN, Step.FAILED}),
    Step.FOLLOW_UP_SENT: frozenset({Step.JOB_WRITTEN, Step.FAILED}),
    Step.JOB_WRITTEN: frozenset({Step.RELEASED, Step.DONE, Step.FAILED}),
    Step.RELEASED: frozenset({Step.DONE, Step.FAILED}),
    Step.DONE: frozenset(),
    Step.FAILED: frozenset(),
}
ENDS = frozenset(step for step, moves in MOVES.items() if not moves)


def allows(path: Sequence[Step]) -> bool:
    """The path starts where every recording starts and takes only moves of the table."""
    return bool(path) and path[0] is Step.ANSWERED and all(b in MOVES[a] for a, b in itertools.pairwise(path))


class OutOfOrder(RuntimeError):
    """A move the recording order does not allow: a programming error of the recorder."""


class Recording:
    """One attempt's way through the table, and the future the recorder hands back for it. `name` names the attempt
    in the log; `ended` is called with the recording as it reaches done or failed, before its future ends (an error
    it raises is logged, never the attempt's). Moved by one thread at a time: a window's writes of one attempt run
    one after the other."""

    def __init__(self, name: str, ended: Callable[[Recording], None] | None = None) -> None:
        self.name = name
        self.path: list[Step] = [Step.ANSWERED]
        self.future: Future[None] = Future()
        self._ended = ended

    @property
    def step(self) -> Step:
        return self.path[-1]

    @property
    def ended(self) -> bool:
        return self.step in ENDS

    def move(self, to: Step) -> bool:
        """Move on to `to` (not failed: `fail` is the way there); True when moved. A move the table refuses is
        logged and fails the attempt (`OutOfOrder`), unless it has already ended: then it is only logged."""
        if to is not Step.FAILED and to in MOVES[self.step]:
            self.path.append(to)
            if to is Step.DONE:
                self._end(None)
            return True
        path = " -> ".join(step.value for step in self.path)
        log.error("recording attempt %s: %s -> %s is not a move of the recording order", self.name, path, to.value)
        self.fail(OutOfOrder(f"{self.step.value} -> {to.value} is not a move of the recording order"))
        return False

    def fail(self, error: BaseException) -> None:
        """The attempt's recording failed: its future raises `error`. Nothing once it has ended (done or failed)."""
        if not self.ended:
            self.path.append(Step.FAILED)
            self._end(error)

    def _end(self, error: BaseException | None) -> None:
        if self._ended is not None:
            try:
                self._ended(self)
            except Exception:
                log.exception("a watcher of the recorder failed on attempt %s", self.name)
        if error is None:
            self.future.set_result(None)
        else:
            self.future.set_exception(error)
