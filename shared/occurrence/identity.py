"""An occurrence's identity: one scheduled instant of one job, by one trigger.

Its execution id is derived from the job, the instant and the trigger, so every delivery of the same occurrence
(a duplicate from the dispatcher, a redelivery from the queue) names the same execution, and the executor's claim
turns duplicates into no-ops. Pure.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum

from ..keys import JobKey
from ..model import format_utc

_NAMESPACE = uuid.UUID("6f1c9a52-3c1e-4d8e-9a57-5a1f0f3c2b11")


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
