"""One occurrence on its way to execution: the queue message, and its deterministic execution id.

An occurrence is one scheduled instant of one job. Its execution id is derived from the job and the
instant, so every delivery of the same occurrence (a duplicate from the dispatcher, a redelivery from
the queue) names the same execution, and the executor's claim turns duplicates into no-ops.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

from .keys import JobKey
from .model import JobHistoryActionName, format_utc, to_utc
from .telemetry.propagation import current_traceparent

_NAMESPACE = uuid.UUID("6f1c9a52-3c1e-4d8e-9a57-5a1f0f3c2b11")


class Trigger(str, Enum):
    SCHEDULE = "schedule"  # an occurrence of the job's recurrence (or its one-shot startTime)
    RUN_NOW = "run"  # POST .../run: counts as an execution, not toward `count`


def execution_id(job: JobKey, occurrence: datetime, trigger: Trigger) -> str:
    name = f"{job.resource_id.lower()}|{format_utc(occurrence)}|{trigger.value}"
    return str(uuid.uuid5(_NAMESPACE, name))


class MalformedMessage(ValueError):
    """A queue message that is not an occurrence of ours; it goes to the poison queue."""


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

    @property
    def execution_id(self) -> str:
        return execution_id(self.job, self.occurrence, self.trigger)

    @property
    def claim_id(self) -> str:
        return f"{self.execution_id}|{self.action.value}|{self.attempt}"

    def retry(self, due: datetime) -> OccurrenceMessage:
        return replace(self, due=due, attempt=self.attempt + 1)

    def error_action(self, due: datetime) -> OccurrenceMessage:
        return replace(self, due=due, action=JobHistoryActionName.ERROR_ACTION, attempt=0)

    def to_json(self) -> str:
        k = self.job
        traceparent = current_traceparent() or self.traceparent  # the sender's span, when telemetry is on
        return json.dumps({
            "v": 1, "job": [k.subscription, k.resource_group, k.collection, k.job],
            "occurrence": format_utc(self.occurrence), "due": format_utc(self.due), "trigger": self.trigger.value,
            "action": self.action.value, "attempt": self.attempt, "generation": self.generation,
            **({"tp": traceparent} if traceparent else {}),
        }, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> OccurrenceMessage:
        try:
            data = json.loads(text)
            if data.get("v") != 1:
                raise ValueError(f"unknown message version {data.get('v')!r}")
            subscription, group, collection, job = (str(part) for part in data["job"])
            return cls(
                job=JobKey(subscription, group, collection, job),
                occurrence=to_utc(datetime.fromisoformat(data["occurrence"])),
                due=to_utc(datetime.fromisoformat(data["due"])),
                trigger=Trigger(data["trigger"]),
                action=JobHistoryActionName(data["action"]),
                attempt=int(data["attempt"]),
                generation=int(data["generation"]),
                traceparent=data["tp"] if isinstance(data.get("tp"), str) else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise MalformedMessage(f"not an occurrence message: {exc}") from exc
