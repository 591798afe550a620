"""Records to wire JSON: ARM identity (id/type/name), no secrets, enum casing as the service emitted it, and
only what the request's api-version knows (shared/model/versions.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import jobstate
from ..keys import COLLECTION_TYPE, HISTORY_TYPE, JOB_TYPE, JobKey
from ..model import (
    JobCollectionDefinition,
    JobDefinition,
    JobExecutionStatus,
    JobHistoryDefinition,
    JobHistoryProperties,
    OccurrenceTrigger,
)
from ..model.versions import ApiVersion, hide
from ..records import CollectionRecord, HistoryRecord, JobRecord


def render_collection(record: CollectionRecord) -> dict[str, Any]:
    definition = record.definition
    properties = definition.properties.model_copy(update={"state": record.state}) if definition.properties else None
    return JobCollectionDefinition(
        id=record.key.resource_id,
        type=COLLECTION_TYPE,
        name=record.key.collection,
        location=definition.location,
        tags=definition.tags,
        properties=properties,
    ).to_wire()


def render_job(record: JobRecord, now: datetime, version: ApiVersion, with_status: bool = True) -> dict[str, Any]:
    """The job as the service answered it, in `version`. A Disabled job has no `status` (GET, list and PUT
    answers alike, docs/wire-contract.md §2.12); `with_status=False` leaves it out for any state."""
    status = jobstate.status(record, now) if with_status else None
    properties = record.properties.model_copy(update={"state": record.state, "status": status})
    return hide(
        version,
        JobDefinition,
        JobDefinition(id=record.key.resource_id, type=JOB_TYPE, name=record.key.name, properties=properties).to_wire(),
    )


def history_document(key: JobKey, entry_id: str, properties: JobHistoryProperties) -> dict[str, Any]:
    """A history entry's resource (an attempt's, or a ledger entry's in the newer api-version)."""
    return JobHistoryDefinition(
        id=f"{key.resource_id}/history/{entry_id}",
        type=HISTORY_TYPE,
        name=f"{key.name}/{entry_id}",
        properties=properties,
    ).to_wire()


_TRIGGERS = {
    "schedule": OccurrenceTrigger.SCHEDULE,
    "run": OccurrenceTrigger.RUN_NOW,
    "backfill": OccurrenceTrigger.BACKFILL,
}


def wire_trigger(trigger: str) -> OccurrenceTrigger | None:
    """An occurrence's trigger (occurrence.Trigger's value, as stored) as the newer api-version names it."""
    return _TRIGGERS.get(trigger)


def render_history(record: HistoryRecord, identity: bool = False) -> dict[str, Any]:
    """An attempt or a note, as 2016-03-01 history lists it; with `identity` (the newer api-version's attempts),
    an attempt also names its occurrence as its ledger entry does: `executionTag` (every attempt's row holds it),
    `occurrenceTime` and `trigger` (rows written since they are kept). A note names none."""
    attempt = identity and record.status != JobExecutionStatus.POSTPONED
    known = attempt and record.occurrence is not None
    return history_document(
        record.key,
        record.history_id,
        JobHistoryProperties(
            start_time=record.start_time,
            end_time=record.end_time,
            expected_execution_time=record.expected_execution_time,
            action_name=record.action_name,
            status=record.status,
            message=record.message,
            retry_count=record.retry_count,
            repeat_count=record.repeat_count,
            occurrence_time=record.occurrence if known else None,
            trigger=wire_trigger(record.trigger) if known else None,
            execution_tag=record.execution_id if attempt and record.execution_id else None,
        ),
    )
