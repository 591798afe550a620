"""Job collection writes: PUT (create or replace) and PATCH (merge), one pipeline for both.

definition (PATCH merged onto the stored one) -> model validation -> collection rules (InvalidDefinition)
-> plan rules against the subscription and the jobs it holds (QuotaExceeded) -> store -> state cascade.
A change between Enabled and Disabled cascades to the jobs like POST enable/disable (cascade.py: queued).
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..jobstate import FINAL_STATES, series_of
from ..keys import CollectionKey, fold_case
from ..model import JobCollectionDefinition, JobCollectionProperties, JobCollectionState, Sku, SkuName
from ..records import CollectionRecord
from ..recurrence import RecurrenceError
from ..store import ConcurrencyError
from ..store.failures import answer_lost
from .cascade import finish_delete, queue_cascade
from .documents import MAX_DEFINITION_BYTES, document_size, merge, validate
from .errors import CollectionNotFound, InvalidDefinition, QuotaExceeded
from .occurrence_rules import check_pause
from .quotas import check_job, check_job_count, limits_of, sku_of
from .races import again_on_race
from .regions import display_location, same_location

if TYPE_CHECKING:
    from ..runtime import Runtime


def _prepare(
    key: CollectionKey,
    definition: JobCollectionDefinition,
    existing: CollectionRecord | None,
    default_state: JobCollectionState,
    now: datetime,
) -> tuple[JobCollectionDefinition, JobCollectionState]:
    """The definition to store (SKU materialised, location as display name) and the state; InvalidDefinition."""
    if definition.name is not None and fold_case(definition.name) != fold_case(key.collection):
        raise InvalidDefinition(f"name '{definition.name}' does not match the job collection in the URL.", "name")
    location = definition.location
    stored_location = existing.definition.location if existing else None
    if location is not None and not location.strip():
        raise InvalidDefinition("location must not be empty.", "location")
    if (
        existing is not None
        and location is not None
        and stored_location
        and not same_location(location, stored_location)
    ):
        raise InvalidDefinition(f"A job collection cannot move from {stored_location} to another location.", "location")
    properties = definition.properties or JobCollectionProperties()
    if properties.state == JobCollectionState.DELETED:
        raise InvalidDefinition(
            "state can be Enabled, Disabled or Suspended; delete the collection to remove it.", "properties.state"
        )
    check_pause(
        properties.pause,
        existing.definition.properties.pause if existing and existing.definition.properties else None,
        now,
    )
    recurrence = properties.quota.max_recurrence if properties.quota else None
    if recurrence is not None and recurrence.frequency is None:
        raise InvalidDefinition("maxRecurrence needs a frequency.", "properties.quota.maxRecurrence.frequency")
    stored = definition.model_copy(
        update={
            "id": None,
            "type": None,
            "name": None,
            "location": display_location(location) if location else stored_location,
            "properties": properties.model_copy(
                update={
                    "state": None,
                    "sku": properties.sku if properties.sku and properties.sku.name else Sku(name=SkuName.STANDARD),
                }
            ),
        }
    )
    # Measured as stored: non-ASCII tags take 6 bytes a character there, and a table property holds 64 KiB.
    size = document_size(stored.to_document())
    if size > MAX_DEFINITION_BYTES:
        raise InvalidDefinition(f"The job collection is {size} bytes as stored; the maximum is {MAX_DEFINITION_BYTES}.")
    return stored, properties.state or default_state


def _check_plan(
    rt: Runtime, key: CollectionKey, definition: JobCollectionDefinition, existing: CollectionRecord | None
) -> None:
    """QuotaExceeded when the subscription has another Free collection, or the jobs held do not fit the new limits."""
    sku = sku_of(definition)
    if sku == SkuName.FREE and (existing is None or sku_of(existing.definition) != SkuName.FREE):
        others = [
            k
            for k in rt.store.collections.keys_with_sku(key.subscription, SkuName.FREE.value)
            if (fold_case(k.resource_group), fold_case(k.collection))
            != (fold_case(key.resource_group), fold_case(key.collection))
        ]
        if others:
            raise QuotaExceeded(
                f"sku: the subscription already has a Free job collection ('{others[0].collection}'); "
                "a subscription may have one."
            )
    if existing is None:
        return
    limits = limits_of(definition)
    if limits == limits_of(existing.definition):
        return
    count = rt.store.jobs.count_up_to(key, limits.max_jobs + 1)
    if count > limits.max_jobs:
        check_job_count(limits, count)
    for job in rt.store.jobs.all(key):
        if job.state in FINAL_STATES:
            continue  # it will never run again
        try:
            series = series_of(job).engine if job.properties.recurrence is not None else None
        except RecurrenceError:
            series = None
        check_job(limits, job.properties, series, job.key.job)


def _save(
    rt: Runtime,
    key: CollectionKey,
    definition: JobCollectionDefinition,
    state: JobCollectionState,
    existing: CollectionRecord | None,
    what_if: bool = False,
) -> CollectionRecord:
    _check_plan(rt, key, definition, existing)
    record = CollectionRecord(
        key=existing.key if existing else key,
        definition=definition,
        state=state,
        job_count=existing.job_count if existing else 0,
        etag=existing.etag if existing else None,
    )
    if what_if:
        return record
    record = _write_row(rt, record, existing is None)
    if existing is not None and existing.state != state:
        queue_cascade(rt, record.key, state)
    return record


def _write_row(rt: Runtime, record: CollectionRecord, create: bool) -> CollectionRecord:
    """The collection's row inserted (`create`) or replaced under its ETag: the record as stored. When storage may
    have applied the write although it failed (its answer was lost), or a replace met a changed row (under lost
    answers, often the storage client's repeat of this replace finding what its first try wrote), the row is read
    again, and the write is done when it holds this record (as lifecycle/writes.py does for jobs). A concurrent
    replace with the very same record counts as done too: what is stored is what the caller asked for."""
    try:
        return rt.store.collections.insert(record) if create else rt.store.collections.replace(record)
    except Exception as error:
        # A replace's repeat by the storage client meets the row its lost first try wrote (412); a create is not
        # repeated (a POST), so its "exists" is another create's, which keeps its 201 alone.
        if not answer_lost(error) and (create or not isinstance(error, ConcurrencyError)):
            raise
        stored = rt.store.collections.get(record.key)
        if stored is None or replace(stored, etag=None) != replace(record, etag=None):
            raise
        return stored


def put_collection(
    rt: Runtime,
    key: CollectionKey,
    definition: JobCollectionDefinition,
    keep: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    *,
    what_if: bool = False,
) -> CollectionRecord:
    """Create or replace a collection; an absent state changes nothing. `keep(incoming, stored)` is the caller's
    rule for what of the stored document a replace keeps although the request left it out (the API's: what its
    api-version does not know). A collection whose delete is still queued is created anew once that delete is
    finished here (as if it had finished before). With `what_if`, every check is made and nothing is written
    or queued: the collection as it would be stored (its etag None when it would be created)."""
    return again_on_race(lambda: _put_collection(rt, key, definition, keep, what_if), "job collection")


def _put_collection(
    rt: Runtime,
    key: CollectionKey,
    definition: JobCollectionDefinition,
    keep: Callable[[dict[str, Any], dict[str, Any]], None] | None,
    what_if: bool,
) -> CollectionRecord:
    existing = rt.store.collections.get(key)
    if existing is not None and existing.state == JobCollectionState.DELETED:
        if not what_if:
            finish_delete(rt, existing)
        existing = None
    if existing is not None and keep is not None:
        document = definition.to_document()
        keep(document, existing.definition.to_document())
        definition = validate(JobCollectionDefinition, document)
    default = existing.state if existing else JobCollectionState.ENABLED
    stored, state = _prepare(key, definition, existing, default, rt.clock.now())
    return _save(rt, key, stored, state, existing, what_if)


def patch_collection(
    rt: Runtime, key: CollectionKey, patch: dict[str, Any], *, what_if: bool = False
) -> CollectionRecord:
    """Merge a partial definition document (canonical member names: tags, sku, quota, state) into the stored one;
    with `what_if`, nothing is written or queued (put_collection)."""
    return again_on_race(lambda: _patch_collection(rt, key, deepcopy(patch), what_if), "job collection")


def _patch_collection(rt: Runtime, key: CollectionKey, patch: dict[str, Any], what_if: bool) -> CollectionRecord:
    existing = rt.store.collections.get(key)
    if existing is None or existing.state == JobCollectionState.DELETED:
        raise CollectionNotFound(key)
    for readonly in ("id", "type"):
        patch.pop(readonly, None)
    properties = patch.get("properties")
    if isinstance(properties, dict) and properties.get("state", 0) is None:
        properties.pop("state")  # null state means "unchanged"
    merged = merge(existing.definition.to_document(), patch)
    if isinstance(patch.get("tags"), dict):
        merged["tags"] = patch["tags"]  # ARM convention: PATCH replaces the tag set as a whole
    definition = validate(JobCollectionDefinition, merged)
    stored, state = _prepare(key, definition, existing, existing.state, rt.clock.now())
    return _save(rt, key, stored, state, existing, what_if)
