"""Role assignments: the grants the gate reads (gate.grants_of), created, read, removed and listed here.

request -> API (shared/api/role_assignments.py: parse, call here, render, map errors) -> here -> store.
An assignment is named by a GUID within its subscription and never changes: assigning a name again with
the same scope, role and principal answers the stored assignment; with other content it is
`AssignmentUpdateNotPermitted`; the same scope, role and principal under another name is
`AssignmentExists`. An assignment is seen only at its own scope (a name stored at another scope is
`AssignmentNotFound` there). Lists answer the assignments at, above and below a scope, or at and above it.
No HTTP here: the API maps the refusals to ARM's errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..keys import fold_case
from ..store import ConcurrencyError, RoleAssignmentRecord
from .scopes import covers

if TYPE_CHECKING:
    from ..runtime import Runtime


class AssignmentError(Exception):
    """Base of the role assignments' refusals; `message` is the text the caller sees."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AssignmentNotFound(AssignmentError):
    def __init__(self) -> None:
        super().__init__("The role assignment was not found at this scope.")


class AssignmentUpdateNotPermitted(AssignmentError):
    """The name is taken by an assignment of another scope, role or principal (assignments never change)."""

    def __init__(self) -> None:
        super().__init__("Tenant ID, application ID, principal ID, and scope are not allowed to be updated.")


class AssignmentExists(AssignmentError):
    """The same scope, role and principal are assigned under another name."""

    def __init__(self) -> None:
        super().__init__("The role assignment already exists.")


@dataclass(frozen=True)
class Assignment:
    """What a new assignment grants: `role_id` to `principal_id` (of `principal_type`, "" if not given)
    over `scope` in `subscription`, named `name` (a lowercase GUID)."""

    subscription: str
    scope: str
    name: str
    role_id: str
    principal_id: str
    principal_type: str = ""


def _same_grant(record: RoleAssignmentRecord, wanted: Assignment) -> bool:
    return (fold_case(record.scope), record.role_id, record.principal_id) == (
        fold_case(wanted.scope),
        wanted.role_id,
        wanted.principal_id,
    )


def find_assignment(rt: Runtime, subscription: str, scope: str, name: str) -> RoleAssignmentRecord | None:
    """The assignment named `name` at `scope`; None when there is none, or it is another scope's."""
    record = rt.store.role_assignments.get(subscription, name)
    if record is not None and fold_case(record.scope) != fold_case(scope):
        return None  # the name exists, but at another scope: not this scope's to show
    return record


def get_assignment(rt: Runtime, subscription: str, scope: str, name: str) -> RoleAssignmentRecord:
    record = find_assignment(rt, subscription, scope, name)
    if record is None:
        raise AssignmentNotFound()
    return record


def remove_assignment(rt: Runtime, subscription: str, scope: str, name: str) -> RoleAssignmentRecord | None:
    """Remove the assignment at `scope`; the removed assignment, or None when there was none to remove.

    The one read is what was there: a delete that then finds nothing was answered by another delete, or by the
    storage client's repeat of this one after its answer was lost (the row is gone either way, so this call's
    caller is told what it removed, not "there was none")."""
    record = find_assignment(rt, subscription, scope, name)
    if record is not None:
        rt.store.role_assignments.delete(subscription, record.name)
    return record


def assign(rt: Runtime, wanted: Assignment, created_by: str | None) -> RoleAssignmentRecord:
    """Store `wanted`, or answer the stored assignment of that name when it grants the same."""
    while True:
        existing = rt.store.role_assignments.get(wanted.subscription, wanted.name)
        if existing is not None:
            if not _same_grant(existing, wanted):
                raise AssignmentUpdateNotPermitted()
            return existing
        if any(_same_grant(other, wanted) for other in rt.store.role_assignments.for_subscription(wanted.subscription)):
            raise AssignmentExists()
        record = RoleAssignmentRecord(
            subscription=wanted.subscription,
            name=wanted.name,
            scope=wanted.scope,
            role_id=wanted.role_id,
            principal_id=wanted.principal_id,
            principal_type=wanted.principal_type,
            created_on=rt.clock.now(),
            created_by=created_by,
        )
        try:
            rt.store.role_assignments.insert(record)
        except ConcurrencyError:  # a concurrent assignment of the same name won: answer as for an existing name
            continue
        return record


def list_assignments(
    rt: Runtime, subscription: str, scope: str, *, at_scope: bool = False, principal: str | None = None
) -> list[RoleAssignmentRecord]:
    """The assignments at and above `scope` and, unless `at_scope`, below it; only `principal`'s when
    given; in scope then name order."""
    found = [
        record
        for record in rt.store.role_assignments.for_subscription(subscription)
        if (covers(record.scope, scope) or (not at_scope and covers(scope, record.scope)))
        and (principal is None or record.principal_id == principal)
    ]
    found.sort(key=lambda r: (fold_case(r.scope), r.name))
    return found
