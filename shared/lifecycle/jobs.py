"""Job definition writes: PUT (create or replace) and PATCH (merge), one pipeline for both.

canonical JSON (what the caller keeps and secrets carried over / PATCH merged) -> model validation -> job
rules -> state rules -> quota and plan -> size limit -> record -> store_job (writes.py). Everything that can
refuse runs before the first store write, so a refused write changes nothing stored. Refusals are lifecycle
errors (errors.py); the API maps them to ARM errors.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import TYPE_CHECKING, Any

from .. import jobstate
from ..keys import JobKey
from ..model import HttpAuthenticationType, JobDefinition, JobProperties, JobState
from ..records import CollectionRecord, JobRecord
from ..store import ConcurrencyError
from ..store.failures import passing
from . import occurrence_rules
from .certificates import describe_pfx
from .documents import MAX_DEFINITION_BYTES, carry_secrets, document_size, drop_stale_secrets, merge, validate
from .errors import InvalidDefinition, JobNotFound
from .job_count import release_job, reserve_job
from .parallel import side_by_side
from .quotas import check_job, check_job_count, limits_of
from .races import again_on_race
from .reads import live_collection
from .states import resolve_state
from .validation import effective_start, validate_job
from .writes import store_job

if TYPE_CHECKING:
    from ..runtime import Runtime

# `keep(incoming, stored)`: the caller's rule for what of the stored document a write keeps although the
# request left it out (the API's: what its api-version does not know). Changes `incoming` in place.
Keep = Callable[[dict[str, Any], dict[str, Any]], None]


def _add_certificate_facts(properties: JobProperties) -> None:
    action = properties.action
    for path, holder in (
        ("properties.action", action),
        ("properties.action.errorAction", action.error_action if action else None),
    ):
        auth = holder.request.authentication if holder is not None and holder.request is not None else None
        if auth is not None and auth.type == HttpAuthenticationType.CLIENT_CERTIFICATE and auth.pfx:
            facts = describe_pfx(auth.pfx, auth.password, f"{path}.request.authentication")
            auth.certificate_thumbprint = facts.thumbprint
            auth.certificate_subject_name = facts.subject
            auth.certificate_expiration_date = facts.expiration


def write_job(
    rt: Runtime,
    key: JobKey,
    properties: JobProperties,
    existing: JobRecord | None,
    collection: CollectionRecord,
    *,
    default_state: JobState,
    what_if: bool = False,
) -> JobRecord:
    """Validate a complete job definition against its collection and store it planned; with `what_if`, the
    record as it would be stored and planned, and nothing written (every refusal still raises)."""
    now = rt.clock.now().replace(microsecond=0)
    # A job that had no startTime and still has none keeps its anchor: reading it and writing it back (which
    # sends no startTime, since none is shown) leaves its schedule where it was.
    kept = existing.anchor if existing is not None and existing.properties.start_time is None else None
    series = validate_job(properties, now, kept)
    state = resolve_state(properties.state, existing, default_state)
    limits = limits_of(collection.definition)
    check_job(limits, properties, series, key.job)
    _add_certificate_facts(properties)
    start = effective_start(properties, now, kept)
    # startTime as sent, or none; exceptions long past pruned (occurrence_rules.py)
    stored = properties.model_copy(
        update={"state": None, "status": None, "exceptions": occurrence_rules.pruned(properties, now)}
    )
    size = document_size(stored.to_document())
    if size > MAX_DEFINITION_BYTES:
        raise InvalidDefinition(
            f"The job is {size} bytes as stored; the maximum job size is {MAX_DEFINITION_BYTES}.", "properties"
        )
    record = jobstate.written(key, stored, state, existing, now, start)
    occurrence_rules.check(record, existing, now)
    if existing is None and collection.job_count is not None:
        # A create takes a place in the collection's count (the last check that can refuse). A collection seen
        # full refuses before anything is written; a place lost to a concurrent create after that refuses at
        # the reservation, which runs beside the due entry (an entry without its job is dropped as stale once its
        # instant has passed: jobstate.awaits_its_write).
        check_job_count(limits, collection.job_count)
    if what_if:
        return jobstate.planned(record, now)
    if existing is not None:
        return store_job(rt, record, existing, now)
    reserved = False

    def reserve() -> None:
        nonlocal reserved
        reserve_job(rt, collection)
        reserved = True

    try:
        return store_job(rt, record, None, now, reserve)
    except BaseException as error:
        if reserved and not _maybe_stored(rt, record, error):
            release_job(rt, key.collection_key)
        raise


def _maybe_stored(rt: Runtime, record: JobRecord, error: BaseException) -> bool:
    """Whether a create that failed may have stored its job all the same: storage failed (store/failures.py) after
    the row's write, or the write's answer was lost. A refusal (ConcurrencyError: the row exists, another create's;
    a create is never repeated by the storage client) stored nothing.
    Its place in the count is given back only for a job known not stored; when that cannot be told (storage still
    failing), the count stays one too high, which may refuse a create early but never lets the collection exceed
    its quota."""
    if isinstance(error, ConcurrencyError) or not passing(error):
        return False
    try:
        found = rt.store.jobs.get(record.key)
    except Exception:
        return True
    return found is not None and found.generation == record.generation


def _read_both(rt: Runtime, key: JobKey) -> tuple[CollectionRecord, JobRecord | None]:
    """The live collection and the job, read side by side (CollectionNotFound first when both fail)."""
    return side_by_side(rt.threads, lambda: live_collection(rt, key.collection_key), lambda: rt.store.jobs.get(key))


def put_job(
    rt: Runtime, key: JobKey, properties: dict[str, Any], keep: Keep | None = None, *, what_if: bool = False
) -> tuple[JobRecord, bool]:
    """Create or replace a job from its `properties` document (canonical member names); (record, created). With
    `what_if`, nothing is written: the record is the job as it would be stored (write_job)."""
    return again_on_race(lambda: _put_job(rt, key, deepcopy(properties), keep, what_if), "job")


def _put_job(
    rt: Runtime, key: JobKey, properties: dict[str, Any], keep: Keep | None, what_if: bool
) -> tuple[JobRecord, bool]:
    collection, existing = _read_both(rt, key)
    if existing is not None:
        stored = existing.properties.to_document()
        if keep is not None:
            keep(properties, stored)
        carry_secrets(properties.get("action"), stored.get("action"))
    definition = validate(JobDefinition, {"properties": properties})
    job = definition.properties or JobProperties()
    record = write_job(rt, key, job, existing, collection, default_state=JobState.ENABLED, what_if=what_if)
    return record, existing is None


def patch_job(
    rt: Runtime, key: JobKey, patch: dict[str, Any], keep: Keep | None = None, *, what_if: bool = False
) -> JobRecord:
    """Merge a partial `properties` document into the stored one; absent secrets and state are kept (Q9). With
    `what_if`, nothing is written (write_job)."""
    return again_on_race(lambda: _patch_job(rt, key, deepcopy(patch), keep, what_if), "job")


def _patch_job(rt: Runtime, key: JobKey, patch: dict[str, Any], keep: Keep | None, what_if: bool) -> JobRecord:
    collection, existing = _read_both(rt, key)
    if existing is None:
        raise JobNotFound(key)
    patch.pop("status", None)  # read-only
    if patch.get("state") is None:
        patch.pop("state", None)  # null state means "unchanged" (PowerShell's PATCH sends it so)
    stored = existing.properties.to_document()
    if keep is not None:
        keep(patch, stored)
    merged = merge(stored, patch)
    if isinstance(merged.get("action"), dict):
        patch_action = patch.get("action")
        drop_stale_secrets(
            merged["action"], stored.get("action"), patch_action if isinstance(patch_action, dict) else None
        )
    definition = validate(JobDefinition, {"properties": merged})
    job = definition.properties or JobProperties()
    return write_job(rt, key, job, existing, collection, default_state=existing.state, what_if=what_if)
