"""Occurrences on their way to execution: the queue message, and each occurrence's deterministic execution id.

An occurrence is one scheduled instant of one job. Its execution id is derived from the job and the
instant, so every delivery of the same occurrence (a duplicate from the dispatcher, a redelivery from
the queue) names the same execution, and the executor's claim turns duplicates into no-ops.

A queue message carries an `OccurrenceBatch`: the dispatcher puts up to BATCH_MAX occurrences due at the
same second into one message (a same-second herd costs one message per hundred, not one each); a batch
of one (a retry, an error action, run-now, the API's own dispatch) is written in the single-occurrence
format `{"v": 1, ...}`, and a batch of several as `{"v": 2, "items": [...]}` of the same objects.

A batch may name its watchdog (optional `"w": [message id, pop receipt]`): a hidden copy that whoever queued
the batch sent just before it (store/queue.py), which the batch's first delivery takes over as its own
(shared/leases.py). It exists before any worker has received the batch, so a batch whose receive was lost
on its way to a worker (the queue hides it for the receive's ten minutes) still runs seconds late, not ten
minutes late. A batch and its watchdog may also name a backstop (optional `"b"`, the same shape): a second
hidden copy, later than the watchdog, for when the watchdog's own receive is lost too.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from .keys import JobKey
from .model import JobHistoryActionName, OverlapPolicy, WaitCause, format_utc, to_utc
from .telemetry.propagation import current_traceparent

_NAMESPACE = uuid.UUID("6f1c9a52-3c1e-4d8e-9a57-5a1f0f3c2b11")
# Occurrences per queue message: the most an entity-group transaction takes, and with room to spare
# under the queue's 64 KiB message limit (an occurrence is about 250 bytes, 330 in Base64).
BATCH_MAX = 100
BATCH_BYTES = 40_000  # the JSON of one message at most: Base64 makes 53,334 of it, under 65,536


class Trigger(str, Enum):
    SCHEDULE = "schedule"  # an occurrence of the job's recurrence (or its one-shot startTime)
    RUN_NOW = "run"  # POST .../run: counts as an execution, not toward `count`
    BACKFILL = "backfill"  # POST .../backfill: a past nominal occurrence run again, with an identity of its own


def execution_id(job: JobKey, occurrence: datetime, trigger: Trigger) -> str:
    """The occurrence's identity: the same for every retry, redelivery and recovery of the occurrence, and
    different for each trigger (a backfill or a run-now at the instant of a scheduled occurrence is another
    execution). It goes out as x-ms-execution-tag and Idempotency-Key (Http), MessageId (Service Bus) and
    ExecutionTag (Storage queue envelope)."""
    name = f"{job.resource_id.lower()}|{format_utc(occurrence)}|{trigger.value}"
    return str(uuid.uuid5(_NAMESPACE, name))


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
    # occurrence of its job (overlapPolicy BufferOne, shared/executor/overlap_turn.py): its first fire instant
    # (optional "fd": what its wait is measured from and its place in a concurrency line), what it waits for
    # ("wf"), and whether its due is a rate slot it already holds ("pc": it does not reserve another).
    first_due: datetime | None = None
    waited_for: WaitCause | None = None
    paced: bool = False
    # A poll of the attempt's asynchronous work (optional "poll"): this message polls instead of running the action.
    poll: PollState | None = None

    @property
    def fire_instant(self) -> datetime:
        """When this attempt was first due to fire, before any wait for a limit."""
        return self.first_due or self.due

    @property
    def execution_id(self) -> str:
        return execution_id(self.job, self.occurrence, self.trigger)

    @property
    def attempt_id(self) -> str:
        """The attempt's claim id, the same for its polls (which have claims of their own: `claim_id`)."""
        return f"{self.execution_id}|{self.action.value}|{self.attempt}"

    @property
    def claim_id(self) -> str:
        return self.attempt_id if self.poll is None else f"{self.attempt_id}|poll|{self.poll.count}"

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
        return _dumps({"v": 1, **self.fields()})

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
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc


@dataclass(frozen=True)
class OccurrenceBatch:
    """What one queue message carries: occurrences due at the same second (usually), run side by side."""

    items: tuple[OccurrenceMessage, ...]
    watchdog: tuple[str, str] | None = None  # (message id, pop receipt) of the copy sent before it
    backstop: tuple[str, str] | None = None  # the same, of the later copy that stands in for a lost watchdog

    def __post_init__(self) -> None:
        if not self.items:
            raise ValueError("a batch holds at least one occurrence")

    @property
    def due(self) -> datetime:
        """When the batch's first occurrence is due: the message turns visible just before it."""
        return min(item.due for item in self.items)

    @property
    def last_due(self) -> datetime:
        return max(item.due for item in self.items)

    def to_json(self) -> str:
        data = (
            {"v": 1, **self.items[0].fields()}
            if len(self.items) == 1
            else {"v": 2, "items": [item.fields() for item in self.items]}
        )
        if self.watchdog is not None:
            data["w"] = list(self.watchdog)
        if self.backstop is not None:
            data["b"] = list(self.backstop)
        return _dumps(data)

    def without_watchdog(self) -> OccurrenceBatch:
        """The watchdog's content: the batch, naming its backstop (so a delivery of the watchdog ends it too)."""
        return replace(self, watchdog=None)

    def bare(self) -> OccurrenceBatch:
        """The occurrences alone, naming no copy (what a sender starts from, and the backstop's content)."""
        return replace(self, watchdog=None, backstop=None)

    @classmethod
    def from_json(cls, text: str | bytes) -> OccurrenceBatch:
        try:
            data = json.loads(text)
            version = data.get("v") if isinstance(data, dict) else None
            if version == 1:
                items = [data]
            elif version == 2 and isinstance(data.get("items"), list) and data["items"]:
                items = data["items"]
            else:
                raise ValueError(f"unknown message version {version!r} or no items")
        except (ValueError, TypeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc
        return cls(
            tuple(OccurrenceMessage.from_fields(item) for item in items),
            _watchdog(data.get("w")),
            _watchdog(data.get("b")),
        )


def batches(messages: Iterable[OccurrenceMessage], span: timedelta = timedelta(0)) -> Iterator[OccurrenceBatch]:
    """Messages in due order, at most BATCH_MAX (and BATCH_BYTES of JSON) per batch, each batch's occurrences due
    within `span` of its first (0: at the same instant)."""
    batch: list[OccurrenceMessage] = []
    size = 0
    for message in sorted(messages, key=lambda m: m.due):  # stable: a second's occurrences keep their order
        length = len(message.to_json()) + 1
        if batch and (len(batch) == BATCH_MAX or size + length > BATCH_BYTES or message.due - batch[0].due > span):
            yield OccurrenceBatch(tuple(batch))
            batch, size = [], 0
        batch.append(message)
        size += length
    if batch:
        yield OccurrenceBatch(tuple(batch))


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


def _watchdog(value: Any) -> tuple[str, str] | None:
    # An unreadable reference only costs the delivery a watchdog of its own: never a reason to poison.
    if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) and part for part in value):
        return value[0], value[1]
    return None


def _dumps(data: dict[str, object]) -> str:
    return json.dumps(data, separators=(",", ":"))
