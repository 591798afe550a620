"""What a write stores and a read answers: an entity's values as the SDK reads them back from Table Storage, and
the service's limits on keys, properties and entities.

`stored(entity)` converts a written entity to its read-back form, or raises as the write would fail:
- TypeError, as the SDK raises before sending, for a value of a type it cannot send (an int beyond Int32 must be
  `int64()`: an `EntityProperty(v, EdmType.INT64)`; a str subclass that is no Enum).
- `Invalid` for what the service refuses (400): a key that is no str, longer than 1 KiB (512 UTF-16 units), or
  holding / \\ # ? or a control character (InvalidInput); a string over 64 KiB (32,768 UTF-16 units) or binary
  over 64 KiB (PropertyValueTooLarge); more than 252 properties of its own (TooManyProperties); an entity over
  1 MiB as the service sizes it (EntityTooLarge). Azurite enforces the first two, not the last two; Azure all.
Read back: None values are dropped; str, bool, float, UUID and bytes as written; an Int32 as int; an Int64 as
`EntityProperty(int, EdmType.INT64)`; a datetime as UTC (timezone-aware; a naive one is taken as local time, as the
SDK takes it); an Enum as its str(); a written "etag" or "Timestamp" is not stored (the service keeps its own).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import Enum
from typing import Any
from uuid import UUID

from azure.data.tables import EdmType, EntityProperty

KEYS = ("PartitionKey", "RowKey")
MAX_KEY_UNITS = 512  # UTF-16 code units of a key: 1 KiB
MAX_STRING_UNITS = 32_768  # UTF-16 code units of a string property: 64 KiB
MAX_BINARY_BYTES = 65_536
MAX_PROPERTIES = 252  # besides PartitionKey, RowKey and Timestamp
MAX_ENTITY_BYTES = 1_048_576
_FORBIDDEN_IN_KEYS = frozenset("/\\#?") | {chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))}
_INT32 = range(-(2**31), 2**31)
_INT64 = range(-(2**63), 2**63)


class Invalid(Exception):
    """The service refuses the entity (400): `code` is its error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def stored(entity: dict[str, Any]) -> dict[str, Any]:
    """The entity as a read answers it (without Timestamp and ETag); TypeError or `Invalid` as described above."""
    values = {name: _read_back(value) for name, value in entity.items() if name not in ("etag", "Timestamp")}
    values = {name: value for name, value in values.items() if value is not None}
    for key in KEYS:
        _check_key(key, values.get(key))
    for name, value in values.items():
        if isinstance(value, str) and name not in KEYS and _units(value) > MAX_STRING_UNITS:
            raise Invalid("PropertyValueTooLarge", f"The property value of {name} exceeds the maximum size (64KB).")
        if isinstance(value, bytes) and len(value) > MAX_BINARY_BYTES:
            raise Invalid("PropertyValueTooLarge", f"The property value of {name} exceeds the maximum size (64KB).")
    if len(values) - len(KEYS) > MAX_PROPERTIES:
        raise Invalid("TooManyProperties", f"The entity has more than {MAX_PROPERTIES} properties.")
    if size_of(values) > MAX_ENTITY_BYTES:
        raise Invalid("EntityTooLarge", "The entity is larger than the maximum allowed size (1MB).")
    return values


def size_of(values: dict[str, Any]) -> int:
    """The entity's size as the service counts it toward its 1 MiB: 4 bytes, the keys in UTF-16, and per property
    8 bytes, its name in UTF-16 and its value (a string in UTF-16 plus 4, binary plus 4, Int32 4, Int64, Double
    and DateTime 8, Guid 16, Boolean 1)."""
    size = 4 + 2 * sum(_units(str(values.get(key, ""))) for key in KEYS)
    for name, value in values.items():
        if name not in KEYS:
            size += 8 + 2 * _units(name) + _value_size(value)
    return size


def wire_size(values: dict[str, Any]) -> int:
    """About the bytes of the entity's JSON in a request (each property with its type): the measure of a
    transaction's 4 MiB; an estimate, not the byte count of the SDK's body."""
    return len(json.dumps({name: _wire(value) for name, value in values.items()})) + 40 * len(values)


def _read_back(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, Enum):
        return str(value)
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, tuple):  # EntityProperty, or (value, EdmType) as the SDK takes it too
        return None if value[0] is None else _typed(value[0], EdmType(value[1]))
    kind = type(value)  # the SDK looks the exact type up: a subclass of str or int is not sent
    if kind is int:
        return _int32(value)
    if kind in (bool, float, str, bytes, UUID):
        return value
    raise TypeError(f"Type not supported when sending data to the service: {kind}.")


def _typed(value: Any, edm: EdmType) -> Any:
    if edm == EdmType.INT64:
        if int(value) not in _INT64:
            raise TypeError(f"{value} is too large to be cast to type {edm}.")
        return EntityProperty(int(value), EdmType.INT64)
    if edm == EdmType.INT32:
        return _int32(int(value))
    if edm == EdmType.DOUBLE:
        return float(value)
    if edm == EdmType.BOOLEAN:
        return bool(value)
    if edm == EdmType.DATETIME:
        return _utc(value if isinstance(value, datetime) else datetime.fromisoformat(str(value)))
    if edm == EdmType.GUID:
        return UUID(str(value))
    if edm == EdmType.BINARY:
        return bytes(value)
    return str(value)


def _int32(value: int) -> int:
    if value not in _INT32:
        raise TypeError(f"{value} is too large to be cast to type {EdmType.INT32}.")
    return value


def _utc(value: datetime) -> datetime:
    instant = value.astimezone(UTC)  # a naive datetime is local time, as the SDK's astimezone takes it
    return datetime(*instant.timetuple()[:6], instant.microsecond, tzinfo=UTC)


def _check_key(name: str, key: Any) -> None:
    if key is None:
        raise Invalid("PropertiesNeedValue", f"The entity has no {name}.")
    if not isinstance(key, str):
        raise Invalid("InvalidInput", f"The {name} is not a string.")
    if _units(key) > MAX_KEY_UNITS or any(ch in _FORBIDDEN_IN_KEYS for ch in key):
        raise Invalid("InvalidInput", f"The {name} is too long or holds a character keys may not hold.")


def _units(text: str) -> int:
    """UTF-16 code units: how the service measures strings."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _value_size(value: Any) -> int:
    if isinstance(value, str):
        return 4 + 2 * _units(value)
    if isinstance(value, bytes):
        return 4 + len(value)
    if isinstance(value, bool):
        return 1
    if isinstance(value, UUID):
        return 16
    if isinstance(value, int):
        return 4
    return 8  # Int64, Double, DateTime


def _wire(value: Any) -> Any:
    if isinstance(value, EntityProperty):
        return str(value.value)
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, bytes):
        return "=" * (4 * ((len(value) + 2) // 3))  # its Base64's length
    return str(value)
