"""One write, or one entity-group transaction, applied to a table's rows all or nothing, with the service's checks.

`apply` checks every operation against the rows as they are, then writes them all, or raises `Refused` naming the
first operation the service would refuse and why (its index, status and error code), having written nothing:
- a transaction (`batch`): none at all (400 InvalidInput), a body over 4 MiB (HttpResponseError 413
  RequestBodyTooLarge, raised as such: the service refuses the request, not an operation), more than 100
  operations (400 InvalidInput at 0), a row named twice (400 InvalidDuplicateRow at the second); the partition
  rule (one per transaction) is the SDK's, checked by the caller before anything;
- every operation: the table missing (404 TableNotFound, at 0), an entity the service refuses (400, values.py),
  a create of a row that exists (409 EntityAlreadyExists), a replace or delete of a row that is missing
  (404 ResourceNotFound) or whose ETag is not the one given (412 UpdateConditionNotSatisfied).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError, ResourceNotFoundError

from ..stored_values import Invalid, wire_size
from ..transaction import MAX_OPERATIONS, TransactionRefused
from .errors import bad_request, refused, too_large
from .rows import Key, Row, Rows

MAX_BODY_BYTES = 4 * 1024 * 1024
_BY_STATUS: dict[int, type[HttpResponseError]] = {
    404: ResourceNotFoundError,
    409: ResourceExistsError,
    412: ResourceModifiedError,
}


@dataclass(frozen=True)
class Operation:
    kind: Literal["create", "replace", "upsert", "delete"]
    key: Key
    values: dict[str, Any] | Invalid | None  # what a write stores (or why the service refuses it); None: a delete
    etag: str | None = None  # a replace or delete only if the row still has this ETag


class Refused(Exception):
    """The service refused operation `index` (so nothing was done)."""

    def __init__(self, index: int, status: int, code: str, message: str) -> None:
        super().__init__(f"{index}:{message}")
        self.index, self.status, self.code, self.message = index, status, code, message

    def error(self) -> HttpResponseError:
        """As the SDK raises it for a single operation."""
        return refused(_BY_STATUS.get(self.status, HttpResponseError), self.status, self.code, self.message)

    def in_transaction(self) -> TransactionRefused:
        """As transaction.py's `submit` raises it for an entity-group transaction."""
        return TransactionRefused(self.index, self.status, self.code, f"{self.index}:{self.message}")


def apply(
    rows: Rows | None,
    operations: list[Operation],
    stamp: Callable[[], tuple[datetime, str]],
    *,
    batch: bool,
) -> list[str | None]:
    """Check, then do, the operations (on `rows`; None: the table does not exist); the new ETag of each (None for a
    delete). `stamp()` gives each write its Timestamp and ETag. `Refused` (or HttpResponseError) otherwise."""
    if batch:
        if not operations:
            raise bad_request("InvalidInput", "An entity-group transaction must hold at least one operation.")
        body = sum(wire_size(o.values) if isinstance(o.values, dict) else 64 for o in operations)
        if body > MAX_BODY_BYTES:
            raise too_large(f"a transaction of about {body} bytes (at most {MAX_BODY_BYTES})")
        if len(operations) > MAX_OPERATIONS:
            message = f"The batch request operation exceeds the maximum {MAX_OPERATIONS} changes per change set."
            raise Refused(0, 400, "InvalidInput", message)
    if rows is None:
        raise Refused(0, 404, "TableNotFound", "The table specified does not exist.")
    seen: set[Key] = set()
    for index, operation in enumerate(operations):
        if operation.key in seen:
            message = (
                f"A command with RowKey '{operation.key[1]}' is already present in the batch. "
                "An entity can appear only once in a batch."
            )
            raise Refused(index, 400, "InvalidDuplicateRow", message)
        seen.add(operation.key)
        _check(index, operation, rows.get(operation.key))
    answers: list[str | None] = []
    for operation in operations:
        if operation.kind == "delete":
            rows.remove(operation.key)
            answers.append(None)
            continue
        assert isinstance(operation.values, dict)
        timestamp, etag = stamp()
        rows.put(operation.key, Row(operation.values | {"Timestamp": timestamp}, etag))
        answers.append(etag)
    return answers


def _check(index: int, operation: Operation, current: Row | None) -> None:
    if isinstance(operation.values, Invalid):
        raise Refused(index, 400, operation.values.code, operation.values.message)
    if operation.kind == "create" and current is not None:
        raise Refused(index, 409, "EntityAlreadyExists", "The specified entity already exists.")
    if operation.kind in ("replace", "delete"):
        if current is None:
            raise Refused(index, 404, "ResourceNotFound", "The specified resource does not exist.")
        if operation.etag is not None and operation.etag != current.etag:
            message = "The update condition specified in the request was not satisfied."
            raise Refused(index, 412, "UpdateConditionNotSatisfied", message)
