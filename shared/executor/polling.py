"""Long-running completion (request.asyncCompletion) in the executor: an attempt whose target answers `202 Accepted`
with where to poll ends when the work does, not at the 202
(docs/decisions.md, "Overlap, limits, long-running completion, spread").

Polling is queued work, not a sleeping coroutine: at the 202 the first poll's message is queued (due after the
target's Retry-After, clamped to PT1S-PT1H, else the action's pollingInterval), the ledger shows the occurrence
`Running`, and the attempt's claim is done (attempts.py completes it), so the action is never fired again. Each
poll is a message with a claim of its own (`{attempt's claim}|poll|{n}`) carrying the URL, the first 202's instant,
the attempt's start and due, and its count (occurrence.PollState): a host killed while polling resumes at the next
poll's message. A poll that finds the work going on queues the next; one that finds its end (or comes past the
deadline, counted from the first 202) hands the attempt's result back to attempts.py, which decides (retries,
the error action) and records it as any attempt: one history entry from the attempt's first request to the
work's final status, its message saying how many polls it took. The attempt's concurrency slot is held from its
first request to that end (limits.py: kept past each next poll, `GoesOn`; a poll asks for no slot of its own),
and each poll takes a rate slot of the host it goes to (the Location's). The overlap marker is held past each next poll
(`overlap_marker.extend`, only for occurrences the marker keeps, `jobstate.overlap.tracked`): the occurrence runs
while it is polled.

Queued before the claim is done: a crash between the two fires the action again (a duplicate, never a lost poll),
or, after a poll, polls again: a second chain of polls of the same attempt. Whichever poll finds the work's end
records the attempt as one: its history is keyed by the attempt's due (`OccurrenceMessage.attempt_due`) and the job
counts it under the attempt's id (`attempt_id`, fired.py `attempt_of`), so a second end rewrites the same entry and
counts nothing; a repeated poll that comes after the end finds its attempt done (admission.py) and polls nothing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from ..actions import Accepted, ActionResult, ActionRunner, ExecutionContext
from ..clock import Clock
from ..jobstate import marker_until, series_of
from ..jobstate.overlap import tracked
from ..model import AsyncCompletion, JobErrorAction, JobExecutionStatus, JobHistoryActionName, format_duration
from ..model.concurrency import ASYNC_MAX_INTERVAL, ASYNC_MIN_INTERVAL
from ..occurrence import OccurrenceMessage, PollState, Trigger
from ..records import HistoryRecord, JobRecord, LedgerEntry
from ..store import Store
from . import overlap_marker
from .persist import persist

log = logging.getLogger(__name__)

Blocking = Callable[..., Awaitable[Any]]  # (fn, *args) -> awaitable of fn(*args), run off the event loop

Run = Callable[[JobErrorAction, ExecutionContext], Awaitable[ActionResult]]


@dataclass(frozen=True)
class GoesOn:
    """The attempt's work goes on: its next poll is queued, due `next_due` (its concurrency slot is kept until
    then: limits.py `release`)."""

    next_due: datetime


def covering(history: HistoryRecord, message: OccurrenceMessage) -> HistoryRecord:
    """A polled attempt's history covers from its first request (at its own due) to the work's end."""
    if message.poll is None:
        return history
    return replace(history, start_time=message.poll.started, expected_execution_time=message.poll.due)


class Polling:
    def __init__(self, store: Store, clock: Clock, actions: ActionRunner, io: Blocking) -> None:
        self.store = store
        self.clock = clock
        self.actions = actions
        self.io = io

    async def attempt(
        self,
        job: JobRecord,
        message: OccurrenceMessage,
        action: JobErrorAction,
        context: ExecutionContext,
        started: datetime,
        run: Run,
    ) -> ActionResult | GoesOn:
        """The attempt's result: its action's (`run`), or, for a poll's message, the work's end; GoesOn while the
        work goes on (the next poll is queued; the caller completes this message's claim)."""
        completion = action.request.async_completion if action.request is not None else None
        if message.poll is not None:
            if completion is None:  # the job was redefined without it: the poll's message is of no use
                return ActionResult(False, "Http Action - asyncCompletion was removed while the work was polled")
            return await self._poll(job, message, action, context, message.poll)
        result = await run(action, context)
        if result.accepted is None or completion is None:
            return result
        try:
            now = self.clock.now()
            state = PollState(result.accepted.location, result.accepted.operation, now, started, message.due)
            return await self._next(job, message, action, state, result.accepted, now, result.message, first=True)
        except Exception as exc:  # the action went out: record the attempt, never hand it back to fire again
            log.exception("following the accepted work of %s failed", message.claim_id)
            return ActionResult(
                False, _not_followed(result.accepted.location, f"internal error: {_why(exc)}", result.message)
            )

    async def _poll(
        self,
        job: JobRecord,
        message: OccurrenceMessage,
        action: JobErrorAction,
        context: ExecutionContext,
        state: PollState,
    ) -> ActionResult | GoesOn:
        assert action.request is not None and action.request.async_completion is not None
        deadline = action.request.async_completion.effective_deadline
        host = _host(state.location)
        polls = f"{state.count - 1} poll{'' if state.count == 2 else 's'}"
        if self.clock.now() >= state.accepted + deadline:
            return ActionResult(
                False,
                f"Http Action - The operation at host '{host}' did not complete within {format_duration(deadline)} "
                f"of its 202 Accepted ({polls}).",
            )
        polled = await self.actions.poll_async(action, context, Accepted(state.location, state.operation))
        if polled.again is None:
            done = "completed" if polled.succeeded else "ended"
            return ActionResult(polled.succeeded, f"{polled.message} (the operation {done} after {state.count} polls)")
        try:
            now = self.clock.now()
            later = replace(
                state, location=polled.again.location, operation=polled.again.operation, count=state.count + 1
            )
            return await self._next(job, message, action, later, polled.again, now, polled.message, first=False)
        except Exception as exc:  # the poll went out: end the work recorded, never poll the same answer again
            log.exception("following the work of %s after a poll failed", message.claim_id)
            return ActionResult(False, _not_followed(state.location, f"internal error: {_why(exc)}", polled.message))

    async def _next(
        self,
        job: JobRecord,
        message: OccurrenceMessage,
        action: JobErrorAction,
        state: PollState,
        accepted: Accepted,
        now: datetime,
        answered: str,
        first: bool,
    ) -> GoesOn | ActionResult:
        """Queue the poll `state` (`poll_due`); a poll that cannot be queued ends the attempt, failed, with why
        (`answered`: the history message of the answer that asked for it)."""
        assert action.request is not None and action.request.async_completion is not None
        due = poll_due(action.request.async_completion, accepted.retry_after, state.accepted, now)
        following = message.polled(state, due)
        try:
            await self.io(self._queue, job, message, following, first, now)
        except Exception as exc:  # what storage refused (a size, a queue gone): the same send would fail again
            log.exception("the poll of %s could not be queued", message.claim_id)
            return ActionResult(
                False, _not_followed(state.location, f"its poll could not be queued ({_why(exc)})", answered)
            )
        return GoesOn(due)

    def _queue(
        self, job: JobRecord, message: OccurrenceMessage, following: OccurrenceMessage, first: bool, now: datetime
    ) -> None:
        # Waited out through a storage outage, as the record of an attempt is (persist.py): the action went out.
        persist(self.clock, self.store.timings, lambda: self.store.queue.send(following, now), following.claim_id)
        if tracked(job, message.overlap):
            try:  # the occurrence runs while it is polled; else its marker lapses `running_lease` after this poll
                until = marker_until(following.due, self.store.timings.running_lease)
                overlap_marker.extend(self.store.jobs, job.key, message.execution_id, until)
            except Exception:
                log.exception("the overlap marker of occurrence %s was not held for its polls", message.claim_id)
        if first and message.action == JobHistoryActionName.MAIN_ACTION:
            try:
                self.store.history.add_all([], [_running(job, message, following)])
            except Exception:  # a record of a state, rewritten by the attempt's end: never worth running it again
                log.exception("the Running entry of occurrence %s was not written", message.claim_id)
        log.info("%s accepted the work of %s; polling %s", message.claim_id, job.key.resource_id, following.claim_id)


def poll_due(completion: AsyncCompletion, retry_after: float | None, accepted: datetime, now: datetime) -> datetime:
    """When the next poll is due: after the target's Retry-After (clamped to PT1S-PT1H; any number, however large)
    or else the pollingInterval, and never past the deadline (counted from the first 202), so it passes on time."""
    wait = completion.effective_interval
    if retry_after is not None and not math.isnan(retry_after):
        low, high = ASYNC_MIN_INTERVAL.total_seconds(), ASYNC_MAX_INTERVAL.total_seconds()
        wait = timedelta(seconds=min(max(retry_after, low), high))  # clamped before it becomes a time span
    return min(now + wait, max(accepted + completion.effective_deadline, now))


def _why(exc: Exception) -> str:
    """A storage error's code (RequestBodyTooLarge, QueueNotFound), else the exception's type; never its text."""
    code = getattr(exc, "error_code", None)
    return str(code) if code else type(exc).__name__


def _not_followed(location: str, why: str, answered: str) -> str:
    """The history message of work whose polling could not go on (`answered`: the last answer's): its outcome is
    unknown."""
    host = _host(location)
    return (
        f"Http Action - Host '{host}' accepted the work, but it could not be followed: {why}; its outcome is unknown. "
        f"{answered}"
    )


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # a URL no poll could follow (shared/actions/accepted.py refuses those at the 202)
        return ""


def _running(job: JobRecord, message: OccurrenceMessage, following: OccurrenceMessage) -> LedgerEntry:
    """The ledger entry of an occurrence whose work is polled (its attempt's end replaces it)."""
    assert following.poll is not None
    scheduled = message.trigger == Trigger.SCHEDULE
    return LedgerEntry(
        key=job.key,
        execution_id=message.execution_id,
        occurrence=message.occurrence,
        trigger=message.trigger.value,
        status=JobExecutionStatus.RUNNING,
        message="Running: the target accepted the work (202 Accepted); it is polled until it ends.",
        start_time=following.poll.started,
        retry_count=message.attempt,
        attempts=message.attempt + 1,
        repeat_count=series_of(job).repeat_count(message.occurrence) if scheduled else 0,
    )
