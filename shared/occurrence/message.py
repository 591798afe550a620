"""The message of one attempt of an occurrence: `OccurrenceMessage`, what the queue carries for the executor (a
batch holds several: batch.py), and `PollState`, the poll of an asynchronous target's work that a message may carry.

On the wire a message is the JSON object `fields()` answers (a single-occurrence message is `{"v": 1, ...}` of it);
members added since the first version are optional, so an older message still reads. `from_json`/`from_fields`
raise MalformedMessage for anything not a message of ours (it goes to the poison queue); an unreadable optional
member (an overlap override, a wait cause) reads as absent rather than poisoning the message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from ..keys import JobKey
from ..model import JobHistoryActionName, OverlapPolicy, WaitCause, format_utc, to_utc
from ..telemetry.propagation import current_traceparent
from .identity import Trigger, execution_id


class MalformedMessage(ValueError):
    """A queue message that is not an occurrence of ours; it goes to the poison queue."""


@dataclass(frozen=True)
class PollState:
    """A poll of an asynchronous target's work (request.asyncCompletion; optional "poll" of a message): what to
    GET, and what the attempt's record needs at the end. Its message is queued work of its own, with a claim
    id of its own, so polling survives a host restart and the action is never fired again."""

    location: str  # the URL to GET: the 202's Location, or its Azure-AsyncOperation
    operation: bool  # an Azure-AsyncOperation URL: its body's `status` decides
    accepted: datetime  # the first 202: the deadline counts from it
    started: datetime  # the start of the attempt's request: its history entry covers from there
    due: datetime  # the attempt's own due (its history's expectedExecutionTime)
    count: int = 1  # which poll this is, from 1

    def fields(self) -> dict[str, object]:
        return {
            "url": self.location,
            "op": self.operation,
            "at": format_utc(self.accepted),
            "st": format_utc(self.started),
            "due": format_utc(self.due),
            "n": self.count,
        }

    @classmethod
    def from_fields(cls, data: Any) -> PollState | None:
        if data is None:
            return None
        return cls(
            location=str(data["url"]),
            operation=bool(data["op"]),
            accepted=to_utc(datetime.fromisoformat(str(data["at"]))),
            started=to_utc(datetime.fromisoformat(str(data["st"]))),
            due=to_utc(datetime.fromisoformat(str(data["due"]))),
            count=int(str(data["n"])),
        )


@dataclass(frozen=True)
class OccurrenceMessage:
    job: JobKey
    occurrence: datetime  # the expected execution time of the occurrence
    due: datetime  # when this message should run: the occurrence, or later for a retry
    trigger: Trigger = Trigger.SCHEDULE
    action: JobHistoryActionName = JobHistoryActionName.MAIN_ACTION
    attempt: int = 0  # retry index within this action of this occurrence, from 0
    generation: int = 0  # the job definition this occurrence was planned for
    # W3C traceparent of whoever queued it (optional "tp"; older messages have none): the execution's parent.
    traceparent: str | None = None
    # The overlap policy a run-now or backfill request chose for this occurrence (optional "ov"); None: the job's.
    overlap: OverlapPolicy | None = None
    # An attempt queued again to wait (issue 27): for a limit (shared/executor/limits.py) or for the previous
    # occurrence of its job (overlapPolicy BufferOne, shared/executor/admission.py): its first fire instant
    # (optional "fd": what its wait is measured from and its place in a concurrency line), what it waits for
    # ("wf"), and whether its due is a rate slot it already holds ("pc": it does not reserve another).
    first_due: datetime | None = None
    waited_for: WaitCause | None = None
    paced: bool = False
    # A poll of the attempt's asynchronous work (optional "poll"): this message polls instead of running the action.
    poll: PollState | None = None
    # A replay of a dead-lettered occurrence (shared/store/dead_letters.py; optional "rp", "ra"): which replay, from
    # 1, and when it was asked for. It enters the claim id (a replay must not be dropped as already run) but not
    # the execution id: the target sees the occurrence's identity again.
    replay: int = 0
    replayed_at: datetime | None = None

    @property
    def scheduled(self) -> bool:
        """Fired by the job's schedule (not a run-now, a backfill or a replay): what the schedule's rules (the job's
        state, a pause, the missed-run policy) decide about."""
        return self.trigger == Trigger.SCHEDULE and self.replay == 0

    @property
    def first_attempt(self) -> bool:
        """The occurrence's first attempt (its main action's, not a retry's): the one its ledger entry and its waits
        are written for (a retry or an error action leaves the entry its earlier attempt wrote)."""
        return self.action == JobHistoryActionName.MAIN_ACTION and self.attempt == 0

    @property
    def fire_instant(self) -> datetime:
        """When this attempt was first due to fire, before any wait for a limit."""
        return self.first_due or self.due

    @cached_property  # a uuid5 (a SHA-1), and named again by its claim, history, telemetry and headers
    def execution_id(self) -> str:
        return execution_id(self.job, self.occurrence, self.trigger)

    @cached_property
    def attempt_id(self) -> str:
        """The attempt's claim id, the same for its polls (which have claims of their own: `claim_id`)."""
        replay = f"|replay{self.replay}" if self.replay else ""
        return f"{self.execution_id}|{self.action.value}|{self.attempt}{replay}"

    @property
    def claim_id(self) -> str:
        return self.attempt_id if self.poll is None else f"{self.attempt_id}|poll|{self.poll.count}"

    @property
    def attempt_due(self) -> datetime:
        """The due of the attempt this message runs or polls: a poll's is its attempt's, so whichever poll finds the
        work's end records the attempt under the same key (a poll repeated after a crash starts a second chain)."""
        return self.due if self.poll is None else self.poll.due

    def retry(self, due: datetime) -> OccurrenceMessage:
        return replace(self, due=due, attempt=self.attempt + 1, first_due=None, waited_for=None, paced=False, poll=None)

    def error_action(self, due: datetime) -> OccurrenceMessage:
        return replace(
            self,
            due=due,
            action=JobHistoryActionName.ERROR_ACTION,
            attempt=0,
            first_due=None,
            waited_for=None,
            paced=False,
            poll=None,
        )

    def polled(self, poll: PollState, due: datetime) -> OccurrenceMessage:
        """The message of `poll`, due at `due`."""
        return replace(self, due=due, poll=poll)

    def waiting(self, due: datetime, cause: WaitCause, paced: bool = False) -> OccurrenceMessage:
        """This attempt queued again for `due`, waiting for `cause` (its identity and first fire instant kept)."""
        return replace(self, due=due, first_due=self.fire_instant, waited_for=cause, paced=paced)

    def to_json(self) -> str:
        return compact_json({"v": 1, **self.fields()})

    def fields(self) -> dict[str, object]:
        """The message's JSON object without its version (a batch holds a list of them)."""
        k = self.job
        traceparent = current_traceparent() or self.traceparent  # the sender's span, when telemetry is on
        return {
            "job": [k.subscription, k.resource_group, k.collection, k.job],
            "occurrence": format_utc(self.occurrence),
            "due": format_utc(self.due),
            "trigger": self.trigger.value,
            "action": self.action.value,
            "attempt": self.attempt,
            "generation": self.generation,
            **({"tp": traceparent} if traceparent else {}),
            **({"ov": self.overlap.value} if self.overlap is not None else {}),
            **({"fd": format_utc(self.first_due)} if self.first_due is not None else {}),
            **({"wf": self.waited_for.value} if self.waited_for is not None else {}),
            **({"pc": 1} if self.paced else {}),
            **({"poll": self.poll.fields()} if self.poll is not None else {}),
            **({"rp": self.replay} if self.replay else {}),
            **({"ra": format_utc(self.replayed_at)} if self.replayed_at is not None else {}),
        }

    @classmethod
    def from_json(cls, text: str | bytes) -> OccurrenceMessage:
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("v") != 1:
                raise ValueError(f"unknown message version {data.get('v') if isinstance(data, dict) else None!r}")
        except (ValueError, TypeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc
        return cls.from_fields(data)

    @classmethod
    def from_fields(cls, data: Any) -> OccurrenceMessage:
        try:
            subscription, group, collection, job = (str(part) for part in data["job"])
            return cls(
                job=JobKey(subscription, group, collection, job),
                occurrence=to_utc(datetime.fromisoformat(str(data["occurrence"]))),
                due=to_utc(datetime.fromisoformat(str(data["due"]))),
                trigger=Trigger(data["trigger"]),
                action=JobHistoryActionName(data["action"]),
                attempt=int(str(data["attempt"])),
                generation=int(str(data["generation"])),
                traceparent=data["tp"] if isinstance(data.get("tp"), str) else None,
                overlap=_overlap(data.get("ov")),
                first_due=to_utc(datetime.fromisoformat(str(data["fd"]))) if data.get("fd") else None,
                waited_for=_wait_cause(data.get("wf")),
                paced=bool(data.get("pc")),
                poll=PollState.from_fields(data.get("poll")),
                replay=int(str(data.get("rp") or 0)),
                replayed_at=to_utc(datetime.fromisoformat(str(data["ra"]))) if data.get("ra") else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc


def _overlap(value: Any) -> OverlapPolicy | None:
    # An unreadable override runs the occurrence under its job's policy: never a reason to poison the batch.
    try:
        return OverlapPolicy(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _wait_cause(value: Any) -> WaitCause | None:
    try:
        return WaitCause(value) if isinstance(value, str) else None
    except ValueError:
        return None


def compact_json(data: dict[str, object]) -> str:
    """JSON without spaces: a queue message's size counts."""
    return json.dumps(data, separators=(",", ":"))
