"""Placing by times the attempts that name no occurrence (2016-03-01 history's): the executor's arithmetic
(shared/executor/attempts.py, shared/store/ledger.py) read back from times both lists show.

A ledger entry has the `startTime`, `endTime` and `retryCount` of its latest main-action attempt; retry k was due
`delay(k-1)` (its retry policy's) after attempt k-1 ended, as its `expectedExecutionTime` says; the error action
was due the instant the last main attempt ended, its retries as above; all have the occurrence's `repeatCount`.
So by an exact time where one exists; where the policy changed since (or a polled attempt waited for a limit), by
the nearest earlier end with the same retry and repeat counts, which can mistake two overlapping occurrences.

`Placer(attempts, action, indexes)` holds the attempts at `indexes` as free; each `chain(entry)` takes from them
the attempts of one ledger entry, in the order they ran (an attempt is placed once); what no entry took stays in
`free`. shared/console/attempts.py is the rule that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from ..model import RetryPolicy
from ..retry import MAIN_ACTION_DEFAULT, EffectiveRetry, effective_retry
from .history_entries import EARLIEST, ERROR, MAIN, SAME, count, properties, same, time


@dataclass(frozen=True)
class Attempt:
    index: int  # in the attempts list
    action: str
    status: str
    retry: int
    repeat: int
    due: datetime | None
    start: datetime | None
    end: datetime | None


def _attempt(index: int, entry: Any) -> Attempt:
    p = properties(entry)
    return Attempt(
        index,
        str(p.get("actionName", "")).lower(),
        str(p.get("status", "")),
        count(p.get("retryCount")),
        count(p.get("repeatCount")),
        time(p.get("expectedExecutionTime")),
        time(p.get("startTime")),
        time(p.get("endTime")),
    )


def _retry(policy: Any, default: EffectiveRetry | None) -> EffectiveRetry | None:
    """The action's effective retry policy; None when it cannot be read (then only nearest times place)."""
    if policy is None:
        return effective_retry(None, default)
    try:
        return effective_retry(RetryPolicy.model_validate(policy), default)
    except ValidationError:
        return None


class Placer:
    def __init__(self, attempts: list[Any], action: dict[str, Any], indexes: list[int]) -> None:
        """Places the attempts at `indexes` by their times."""
        self.free: list[Attempt] = [_attempt(index, attempts[index]) for index in indexes]
        found = action.get("errorAction")
        error_action: dict[str, Any] = found if isinstance(found, dict) else {}
        self.retries = {
            MAIN: _retry(action.get("retryPolicy"), MAIN_ACTION_DEFAULT),
            ERROR: _retry(error_action.get("retryPolicy"), None),
        }

    def _take(self, found: Attempt | None) -> Attempt | None:
        if found is not None:
            self.free.remove(found)
        return found

    def latest(self, retry: int, start: datetime | None, end: datetime | None) -> Attempt | None:
        """The main-action attempt a ledger entry was written from."""
        return self._take(
            next(
                (
                    a
                    for a in self.free
                    if a.action == MAIN and a.retry == retry and same(a.start, start) and same(a.end, end)
                ),
                None,
            )
        )

    def before(self, kind: str, retry: int, repeat: int, due: datetime | None, exact: bool) -> Attempt | None:
        """Attempt `retry` of `kind`, the one before an attempt due at `due` (exactly its delay before, when
        `exact` and the policy is known; else the nearest earlier end)."""
        candidates = [
            a
            for a in self.free
            if a.action == kind and a.retry == retry and a.repeat == repeat and a.end is not None
            if due is None or a.end <= due + SAME
        ]
        policy = self.retries[kind]
        if exact and due is not None and policy is not None:
            wanted = due - policy.delay(retry)
            for a in candidates:
                if same(a.end, wanted):
                    return self._take(a)
        return self._take(max(candidates, key=lambda a: a.end or EARLIEST, default=None))

    def after(self, kind: str, retry: int, repeat: int, ended: datetime, delay: timedelta | None) -> Attempt | None:
        """Attempt `retry` of `kind`, due `delay` after `ended` (exactly, when known; else the first due after)."""
        candidates = [
            a
            for a in self.free
            if a.action == kind and a.retry == retry and a.repeat == repeat and a.due is not None
            if a.due >= ended - SAME
        ]
        if delay is not None:
            for a in candidates:
                if same(a.due, ended + delay):
                    return self._take(a)
        if retry == 0:
            return None  # an error action's first attempt is due the instant the main action ended: exactly
        return self._take(min(candidates, key=lambda a: a.due or EARLIEST, default=None))

    def chain(self, entry: dict[str, Any]) -> list[Attempt]:
        """The attempts of one occurrence, in the order they ran."""
        attempts, last = count(entry.get("attempts")), count(entry.get("retryCount"))
        if attempts <= 0:
            return []  # it did not run: skipped, postponed, or waiting for its first attempt
        repeat = count(entry.get("repeatCount"))
        running = str(entry.get("status", "")).lower() == "running"
        mains: list[Attempt] = []
        if running:  # its latest attempt is still polled: not in history yet, started at the entry's startTime
            due, exact = time(entry.get("startTime")), False
        else:
            found = self.latest(last, time(entry.get("startTime")), time(entry.get("endTime")))
            if found is None:
                return []  # its attempts are gone (pruned) or on no page read
            mains.append(found)
            due, exact = found.due, True
        for retry in range(last - 1, -1, -1):
            earlier = self.before(MAIN, retry, repeat, due, exact)
            if earlier is None:
                break
            mains.insert(0, earlier)
            due, exact = earlier.due, True
        if running or not mains or mains[-1].status.lower() != "failed":
            return mains
        return mains + self._error_chain(mains[-1].end, repeat)

    def _error_chain(self, ended: datetime | None, repeat: int) -> list[Attempt]:
        """The error action's attempts after the last main attempt (failed) ended at `ended`."""
        errors: list[Attempt] = []
        policy = self.retries[ERROR]
        while ended is not None:
            delay = timedelta(0) if not errors else (policy.delay(len(errors) - 1) if policy else None)
            found = self.after(ERROR, len(errors), repeat, ended, delay)
            if found is None:
                break
            errors.append(found)
            ended = found.end if found.status.lower() == "failed" else None
        return errors
