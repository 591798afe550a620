"""Turning stored entities back into records, so that one entity that cannot be read never takes a list down.

Contract: an entity that cannot become a record (a document an older or broken version wrote, a row edited
by hand, a value outside the model's rules) raises `UnreadableEntity` from a single read, which the API
answers with an ARM error naming the resource (409 `StoredResourceUnreadable`), and is left out of a list
or scan, with one error log line naming its table keys. Lists and scans therefore always answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TypeVar

from .tables import Entity

log = logging.getLogger(__name__)

T = TypeVar("T")

# What a conversion raises on bad data: pydantic's ValidationError and json's JSONDecodeError are
# ValueErrors; a missing property is a KeyError; a property of the wrong type a TypeError.
_UNREADABLE = (ValueError, KeyError, TypeError)


class UnreadableEntity(Exception):
    """A stored entity that cannot be turned into its record."""

    def __init__(self, kind: str, partition: str, row: str, reason: str) -> None:
        super().__init__(f"stored {kind} {_printable(partition)}/{_printable(row)} cannot be read: {reason}")
        self.kind = kind


def _printable(key: object) -> str:
    # Keys hold user-chosen names: bounded and escaped, so a log line stays one line.
    return str(key)[:200].encode("unicode_escape").decode("ascii")


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"


def read_one(kind: str, entity: Entity, convert: Callable[[Entity], T]) -> T:
    """`convert(entity)`, or UnreadableEntity when the stored data does not convert."""
    try:
        return convert(entity)
    except _UNREADABLE as exc:
        raise UnreadableEntity(kind, entity.get("PartitionKey", "?"), entity.get("RowKey", "?"), _reason(exc)) from exc


def read_each(kind: str, entities: Iterable[Entity], convert: Callable[[Entity], T]) -> list[T]:
    """The records of the entities that convert; each one that does not is logged and left out."""
    records: list[T] = []
    for entity in entities:
        try:
            records.append(read_one(kind, entity, convert))
        except UnreadableEntity as exc:
            log.error("%s; left out of the list", exc)
    return records
