"""Role assignments: one table, partitioned by subscription, so one partition query finds every grant that
can apply to a request (assignments live at subscription, resource group or collection scope).

Names are GUIDs (as ARM requires), unique within a subscription. Assignments are immutable: a PUT of an
existing name with other content is refused by the API, so no ETag dance is needed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .keys import escape
from .tables import ConcurrencyError, Entity, Table, as_datetime

__all__ = ["ConcurrencyError", "RoleAssignmentRecord", "RoleAssignmentStore"]

# Table Storage allows at most 15 comparisons in a filter: the PartitionKey and 14 principal ids. A caller in
# more groups than that reads the whole partition (a handful of rows per subscription, filtered here).
_FILTERED_IDS = 14


@dataclass(frozen=True)
class RoleAssignmentRecord:
    subscription: str
    name: str  # lower-case GUID
    scope: str  # the ARM scope as first written, e.g. /subscriptions/s/resourceGroups/rg
    role_id: str  # lower-case role definition GUID
    principal_id: str  # lower-case object id of a user, group or service principal
    principal_type: str  # User, Group, ServicePrincipal...; "" when the client did not say
    created_on: datetime
    created_by: str | None = None


class RoleAssignmentStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def for_subscription(self, subscription: str) -> list[RoleAssignmentRecord]:
        found = self.table.query("PartitionKey eq @pk", {"pk": escape(subscription)})
        return [record for record in map(_record, found) if record is not None]

    def for_principals(self, subscription: str, principals: frozenset[str]) -> list[RoleAssignmentRecord]:
        """The subscription's assignments naming one of `principals` (lower-case ids). A few ids are filtered by
        the service (one small answer); a token with many groups reads the partition and filters here."""
        if not principals or len(principals) > _FILTERED_IDS:
            return [r for r in self.for_subscription(subscription) if r.principal_id in principals]
        names = {f"p{i}": principal for i, principal in enumerate(sorted(principals))}
        # Spaces around the parentheses: the SDK finds @names by splitting the filter on spaces.
        ids = " or ".join(f"PrincipalId eq @{name}" for name in names)
        found = self.table.query(f"PartitionKey eq @pk and ( {ids} )", {"pk": escape(subscription), **names})
        return [record for record in map(_record, found) if record is not None]

    def get(self, subscription: str, name: str) -> RoleAssignmentRecord | None:
        entity = self.table.get(escape(subscription), name.lower())
        return _record(entity) if entity else None

    def insert(self, record: RoleAssignmentRecord) -> None:
        """ConcurrencyError when the name is taken."""
        self.table.insert(
            {
                "PartitionKey": escape(record.subscription),
                "RowKey": record.name.lower(),
                "Subscription": record.subscription,
                "Scope": record.scope,
                "RoleId": record.role_id,
                "PrincipalId": record.principal_id,
                "PrincipalType": record.principal_type,
                "CreatedOn": record.created_on,
                "CreatedBy": record.created_by,
            }
        )

    def delete(self, subscription: str, name: str) -> bool:
        return self.table.delete(escape(subscription), name.lower())


def _record(entity: Entity) -> RoleAssignmentRecord | None:
    # One damaged row must not take every request of the subscription down: it is skipped (grants nothing).
    try:
        created = as_datetime(entity.get("CreatedOn"))
        assert created is not None
        return RoleAssignmentRecord(
            subscription=str(entity["Subscription"]),
            name=str(entity["RowKey"]),
            scope=str(entity["Scope"]),
            role_id=str(entity["RoleId"]).lower(),
            principal_id=str(entity["PrincipalId"]).lower(),
            principal_type=str(entity.get("PrincipalType") or ""),
            created_on=created,
            created_by=entity.get("CreatedBy"),
        )
    except (KeyError, AssertionError):
        return None
