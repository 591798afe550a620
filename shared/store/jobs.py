"""Jobs: one table, partitioned by collection, so listing a collection's jobs is a partition query.

Secrets never sit in the `Document` property: they are sealed into `Sealed` (sealing.py). A job whose
sealed secrets cannot be opened (its key left the keyring) still loads, without them, and keeps its
sealed value untouched through later writes, so restoring the key restores the secrets.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from ..keys import CollectionKey, JobKey
from ..model import JobProperties, JobState
from ..records import JobRecord, with_etag
from .definitions import Definitions
from .expectations import ExpectationIndex
from .job_rows import SUMMARY_COLUMNS, JobSummary, bound_to, record_of, row_of, summary_of
from .keys import job_partition, job_row
from .pages import page_after, skip_rows
from .readable import read_each, read_one
from .sealing import Keyring, SealError, extract, open_sealed, restore, rewrap, seal
from .tables import ROWS_PER_QUERY, ConcurrencyError, Entity, Table, rows_of

log = logging.getLogger(__name__)
# Jobs of one collection read by one query (get_many, tables.py `rows_of`).
MANY_PER_QUERY = ROWS_PER_QUERY
# Jobs of one collection wanted together: from this many on, they are read by get_many.
MANY_MIN = 2


def groups_of(keys: Iterable[JobKey]) -> list[list[JobKey]]:
    """The keys worth reading together (MANY_MIN or more of one collection), grouped by collection."""
    groups: dict[CollectionKey, set[JobKey]] = {}
    for key in keys:
        groups.setdefault(key.collection_key, set()).add(key)
    return [sorted(group, key=job_row) for group in groups.values() if len(group) >= MANY_MIN]


class JobStore:
    def __init__(
        self, table: Table, keyring: Keyring | None = None, expectations: ExpectationIndex | None = None
    ) -> None:
        self.table = table
        self.keyring = keyring
        self.expectations = expectations  # mirror rows of jobs that carry an expectation (store/expectations.py)
        self.definitions = Definitions()  # unchanged definitions parsed and sealed once (definitions.py)

    def get(self, key: JobKey) -> JobRecord | None:
        entity = self.table.get(job_partition(key.collection_key), job_row(key))
        return read_one("job", entity, self._record) if entity else None

    def insert(self, record: JobRecord) -> JobRecord:
        """The record as stored: `record` with the new ETag."""
        stored = with_etag(record, self.table.insert(self._entity(record)))
        self._mirror(stored)
        return stored

    def replace(self, record: JobRecord) -> JobRecord:
        """Write back a record read earlier (the record as stored, with its new ETag); ConcurrencyError when it
        changed in between."""
        assert record.etag is not None, "replace needs the ETag of the record it read"
        stored = with_etag(record, self.table.replace(self._entity(record), record.etag))
        self._mirror(stored)
        return stored

    def landed(self, record: JobRecord) -> JobRecord | None:
        """After a write of `record` whose outcome is not known (its answer was lost, or the storage client's
        repeat of it met a changed row, which may be the one its first try wrote): the record as stored when the
        row holds exactly `record` (its ETag aside; a write's generation is new, so that is this write or an
        identical one), else None."""
        stored = self.get(record.key)
        if stored is None or replace(stored, etag=None) != replace(record, etag=None):
            return None
        self._mirror(stored)
        return stored

    def _mirror(self, record: JobRecord) -> None:
        if self.expectations is not None and record.expect_success_within is not None:
            self.expectations.mirror(record)

    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        """Several jobs of one collection, MANY_PER_QUERY a query (a filter naming their rows) instead of a read
        each. A job that is not there maps to None; one whose row cannot be read is left out of the answer (for
        the caller to read alone, which raises)."""
        wanted = {job_row(key): key for key in keys}
        found: dict[JobKey, JobRecord | None] = {}
        unreadable: set[JobKey] = set()
        for row, entity in rows_of(self.table, job_partition(collection), wanted).items():
            key = wanted[row]
            record = read_each("job", [entity], self._record)  # an unreadable row is logged and left out
            if record:
                found[key] = record[0]
            else:
                unreadable.add(key)
        for key in wanted.values():
            if key not in found and key not in unreadable:
                found[key] = None
        return found

    def get_together(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        """The jobs of one collection asked for together: `get_many` from MANY_MIN of them on, else a read each. As
        in `get_many`, a job whose row the query could not read is left out (read alone, it raises)."""
        wanted = list(dict.fromkeys(keys))
        if len(wanted) >= MANY_MIN:
            return self.get_many(collection, wanted)
        return {key: self.get(key) for key in wanted}

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
        """Write back records of one collection read earlier, up to 100 in one request (an entity-group
        transaction): each as stored with its new ETag, or None when it was not written (it changed or vanished
        in between, or the transaction was given up on after its second conflict: Table.replace_batch), for
        the caller's own read-modify-write of that one."""
        if not records:
            return []
        assert all(r.etag is not None for r in records), "replace needs the ETag of the record it read"
        assert len({r.key.collection_key for r in records}) == 1, "one transaction holds one collection's jobs"
        if len(records) == 1:
            try:
                return [self.replace(records[0])]
            except ConcurrencyError:
                return [None]
        etags = self.table.replace_batch([(self._entity(r), str(r.etag)) for r in records])
        stored = [with_etag(r, etag) if etag is not None else None for r, etag in zip(records, etags, strict=True)]
        for record in stored:
            if record is not None:
                self._mirror(record)
        return stored

    def delete(self, key: JobKey, etag: str | None = None) -> bool:
        """True if this call removed the job (so exactly one of two concurrent deletes counts it)."""
        return self.table.delete(job_partition(key.collection_key), job_row(key), etag)

    def delete_rows_of(self, collection: CollectionKey) -> None:
        """Delete every job row left in the collection, readable or not (the end of a collection delete)."""
        self.table.delete_partition(job_partition(collection))

    def _filter(self, collection: CollectionKey, state: JobState | None) -> tuple[str, dict[str, Any]]:
        query, params = "PartitionKey eq @pk", {"pk": job_partition(collection)}
        if state is not None:
            query += " and State eq @state"
            params["state"] = state.value
        return query, params

    def page_after(
        self, collection: CollectionKey, state: JobState | None, size: int, after: str | None
    ) -> tuple[list[JobRecord], str | None]:
        """Jobs in row-key order after the cursor `after`; the cursor of the next page or None (keyset paging)."""
        query, params = self._filter(collection, state)
        entities, cursor = page_after(self.table, query, params, size, after)
        return read_each("job", entities, self._record), cursor

    def skip(self, collection: CollectionKey, state: JobState | None, count: int) -> tuple[str | None, bool]:
        """The cursor after the first `count` jobs (reading keys only) and whether fewer exist."""
        query, params = self._filter(collection, state)
        return skip_rows(self.table, query, params, count)

    def count_up_to(self, collection: CollectionKey, limit: int) -> int:
        """How many jobs the collection has, counting no further than `limit` (a quota check needs no more)."""
        query, params = self._filter(collection, None)
        return self.table.count(query, params, limit)

    def all(self, collection: CollectionKey) -> list[JobRecord]:
        found = self.table.query("PartitionKey eq @pk", {"pk": job_partition(collection)})
        return read_each("job", found, self._record)

    def rewrap_all(self) -> tuple[int, int]:
        """Re-wrap every job's sealed data key under the keyring's current key (key rotation).

        Returns (re-wrapped, already current). Each write passes the ETag it read; a job changed in
        between was sealed afresh by that change, under the current key, so it is simply skipped.
        """
        keyring = self._require_keyring()
        done = current = 0
        for entity in self.table.query("PartitionKey ge @lo", {"lo": ""}, select=["PartitionKey", "RowKey", "Sealed"]):
            if not entity.get("Sealed"):
                continue
            fresh = rewrap(keyring, entity["Sealed"])
            if fresh is None:
                current += 1
                continue
            full = self.table.get(entity["PartitionKey"], entity["RowKey"])
            if full is None or full.get("Sealed") != entity["Sealed"]:
                continue
            try:
                self.table.replace({**full, "Sealed": fresh}, str(full["etag"]))
                done += 1
            except ConcurrencyError:
                continue
        return done, current

    def _require_keyring(self) -> Keyring:
        if self.keyring is None:
            raise SealError("SCHEDULER_SECRET_KEYS is not set: secrets can be neither stored nor read")
        return self.keyring

    def _entity(self, record: JobRecord) -> Entity:
        entity = row_of(record)
        bound = bound_to(entity)
        known = self.definitions.stored(record.properties, bound) if record.unopened_secrets is None else None
        if known is not None:
            entity["Document"], entity["Sealed"] = known
            return entity
        document = record.properties.to_document()
        taken = extract(document)
        entity["Document"] = json.dumps(document, separators=(",", ":"))
        if taken:
            entity["Sealed"] = seal(self._require_keyring(), taken, bound)
        else:
            entity["Sealed"] = record.unopened_secrets  # None unless the stored secrets could not be opened
        if record.unopened_secrets is None:
            self.definitions.remember((bound, entity["Document"], entity["Sealed"]), record.properties)
        return entity

    def _record(self, entity: Entity) -> JobRecord:
        stored = (bound_to(entity), str(entity["Document"]), entity.get("Sealed") or None)
        properties = self.definitions.parsed(stored)
        if properties is not None:
            return record_of(entity, properties)
        document = json.loads(entity["Document"])
        unopened = None
        if entity.get("Sealed"):
            try:
                restore(document, open_sealed(self._require_keyring(), entity["Sealed"], bound_to(entity)))
            except SealError as exc:
                # The job stays usable without its secrets (lists, GET, the executor's failure history).
                log.error(
                    "job row %s: secrets not available: %s",
                    entity.get("RowKey", "?")[:100].encode("unicode_escape").decode("ascii"),
                    exc,
                )
                unopened = entity["Sealed"]
        properties = JobProperties.model_validate(document)
        if unopened is None:
            self.definitions.remember(stored, properties)
        return replace(record_of(entity, properties), unopened_secrets=unopened)

    def summaries(self) -> Iterator[JobSummary]:
        """Every job of every collection, as a projection read paged by the SDK (one pass over the table)."""
        for e in self.table.query("PartitionKey ge @lo", {"lo": ""}, select=SUMMARY_COLUMNS):
            yield from read_each("job", [e], summary_of)  # an unreadable row is logged and skipped, the scan goes on
