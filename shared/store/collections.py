"""Job collections: one table, partitioned by subscription, so both list operations are partition queries."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..keys import CollectionKey
from ..model import JobCollectionDefinition, JobCollectionState
from ..records import CollectionRecord
from .keys import collection_partition, collection_row, escape
from .pages import page_after, skip_rows
from .readable import read_each, read_one
from .tables import Entity, Table, read_modify_write

# Which collections a list shows (e.g. the ones a caller may read); None: all of them.
Visible = Callable[[CollectionKey], bool]
KEY_NAMES = ["Subscription", "ResourceGroup", "Name"]  # the properties kept_by reads


def kept_by(visible: Visible | None) -> Callable[[Entity], bool] | None:
    """`visible` over stored entities; an entity without its names is not shown (it could not be read anyway)."""
    if visible is None:
        return None

    def keep(entity: Entity) -> bool:
        try:
            key = CollectionKey(str(entity["Subscription"]), str(entity["ResourceGroup"]), str(entity["Name"]))
        except KeyError:
            return False
        return visible(key)

    return keep


class CollectionStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, key: CollectionKey) -> CollectionRecord | None:
        entity = self.table.get(collection_partition(key), collection_row(key))
        return read_one("job collection", entity, _record) if entity else None

    def insert(self, record: CollectionRecord) -> CollectionRecord:
        """The record as stored: a new one under the row's ETag (the caller's is left as it was)."""
        return replace(record, etag=self.table.insert(_entity(record)))

    def replace(self, record: CollectionRecord) -> CollectionRecord:
        """The record written under the ETag it carries; the new record, under the row's new ETag."""
        assert record.etag is not None, "replace needs the ETag of the record it read"
        return replace(record, etag=self.table.replace(_entity(record), record.etag))

    def count_removed_job(self, key: CollectionKey, attempts: int = 50) -> None:
        """One job fewer in the collection's count, under its ETag. Nothing when the collection is gone or
        its count is not kept yet; a count that keeps changing for `attempts` reads is left (ConcurrencyError,
        logged by the caller) rather than written blindly."""

        def fewer(record: CollectionRecord) -> CollectionRecord | None:
            return None if record.job_count is None else replace(record, job_count=max(record.job_count - 1, 0))

        read_modify_write(lambda: self.get(key), fewer, lambda new, _: self.replace(new), attempts=attempts)

    def delete(self, key: CollectionKey) -> None:
        self.table.delete(collection_partition(key), collection_row(key))

    @staticmethod
    def _scope(subscription: str, resource_group: str | None) -> tuple[str, dict[str, Any]]:
        # A Deleted collection is one whose delete finishes after the API answered: lists leave it out.
        query, params = (
            "PartitionKey eq @pk and State ne @deleted",
            {"pk": escape(subscription), "deleted": JobCollectionState.DELETED.value},
        )
        if resource_group is not None:
            # Rows are `{group}|{collection}`: a range on the row key selects one resource group.
            prefix = escape(resource_group) + "|"
            query += " and RowKey ge @lo and RowKey lt @hi"
            params |= {"lo": prefix, "hi": prefix[:-1] + "}"}
        return query, params

    def page_after(
        self,
        subscription: str,
        resource_group: str | None,
        size: int,
        after: str | None,
        visible: Visible | None = None,
    ) -> tuple[list[CollectionRecord], str | None]:
        """Collections of a subscription (or one of its resource groups) after the cursor `after` (keyset paging),
        only those `visible` accepts when given (pages.py: pages then hold `size` of those)."""
        query, params = self._scope(subscription, resource_group)
        entities, cursor = page_after(self.table, query, params, size, after, keep=kept_by(visible))
        return read_each("job collection", entities, _record), cursor

    def skip(
        self, subscription: str, resource_group: str | None, count: int, visible: Visible | None = None
    ) -> tuple[str | None, bool]:
        query, params = self._scope(subscription, resource_group)
        return skip_rows(self.table, query, params, count, kept_by(visible), None if visible is None else KEY_NAMES)

    def keys_with_sku(self, subscription: str, sku: str) -> list[CollectionKey]:
        """The collections of a subscription on one plan (e.g. the one Free collection it may have)."""
        query = "PartitionKey eq @pk and Sku eq @sku and State ne @deleted"
        found = self.table.query(
            query,
            {"pk": escape(subscription), "sku": sku, "deleted": JobCollectionState.DELETED.value},
            select=["Subscription", "ResourceGroup", "Name"],
        )
        return [CollectionKey(e["Subscription"], e["ResourceGroup"], e["Name"]) for e in found]


def _entity(record: CollectionRecord) -> Entity:
    key = record.key
    sku = record.definition.properties.sku if record.definition.properties else None
    return {
        "PartitionKey": collection_partition(key),
        "RowKey": collection_row(key),
        "Subscription": key.subscription,
        "ResourceGroup": key.resource_group,
        "Name": key.collection,
        "State": record.state.value,
        "Sku": sku.name.value if sku and sku.name else None,
        "Document": json.dumps(record.definition.to_document(), separators=(",", ":")),
        "JobCount": record.job_count,
    }


def _record(entity: Entity) -> CollectionRecord:
    return CollectionRecord(
        key=CollectionKey(entity["Subscription"], entity["ResourceGroup"], entity["Name"]),
        definition=JobCollectionDefinition.model_validate(json.loads(entity["Document"])),
        state=JobCollectionState(entity["State"]),
        job_count=int(entity["JobCount"]) if entity.get("JobCount") is not None else None,
        etag=entity.get("etag"),
    )
