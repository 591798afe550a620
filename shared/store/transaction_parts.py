"""The sub-requests of an entity-group transaction, written as azure-data-tables writes them: `parts_of`.

Why by hand: the SDK's `TableBatchOperations` builds each sub-request through its generated request builders (a
case-insensitive header dict, the serializer's URL and header formatting, an azure-core `HttpRequest` with its JSON
body set), about 15 % of the host's CPU at 100 executions/s in a py-spy profile, for text that is the same every
time but for the keys, the ETag and the body. transaction.py already writes the envelope around them. Here the
parts are written as the SDK 12.7 writes them against the Table service REST API ("Insert Entity", "Update Entity",
"Merge Entity", "Insert Or Replace/Merge Entity", "Delete Entity", all of API version `x-ms-version`): the same
method, URL (a key's quotes doubled, then percent-encoded whole), headers in the same order, and the same EDM JSON
body (the SDK's `_add_entity_properties`, its common values converted inline, dumped as azure-core dumps it).
tests/store/test_transaction_parts.py holds the two byte for byte equal over generated keys and entities (every
value type, None and text enums among them) and every operation shape.

An operation is a tuple as `TableClient.submit_transaction` takes it: `(kind, entity)` or `(kind, entity,
keywords)`, kind one of create, upsert, update, delete; keywords `mode` (an `UpdateMode`, MERGE by default as the
SDK's), `etag` and `match_condition` (unconditional by default; `IfNotModified` needs an ETag). What the SDK
refuses is refused the same way (ValueError: keys missing, two partitions, an unknown kind or keyword, a match
condition without its ETag; TypeError: a key that is not text). A merge against a Cosmos DB endpoint, which the SDK
rewrites as a POST, is not written here: the store speaks to Table Storage, and replaces rows whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from azure.core import MatchConditions
from azure.core.serialization import AzureJSONEncoder
from azure.data.tables import UpdateMode
from azure.data.tables._serialize import _add_entity_properties, _to_entity_datetime

_INT32 = 2**31
Operation = tuple[Any, ...]  # as TableClient.submit_transaction takes them: (kind, entity[, keywords])

_KEYWORDS: dict[str, set[str]] = {
    "create": set(),
    "upsert": {"mode"},
    "update": {"mode", "etag", "match_condition"},
    "delete": {"etag", "match_condition"},
}


@dataclass(frozen=True)
class Part:
    """One sub-request: its request line's method and URL, its headers in order, its body."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None


def parts_of(base_url: str, table: str, version: str, operations: Iterable[Operation]) -> list[Part]:
    """The sub-requests of `operations` (one partition's) against `table` at `base_url` (scheme, host and the
    account's path, no trailing slash)."""
    table_url = f"{base_url}/{quote(table, safe='')}"
    partition: object = None
    parts: list[Part] = []
    for operation in operations:
        kind, entity, keywords = (*operation, {}) if len(operation) == 2 else operation
        kind = kind.lower()  # as the SDK takes them: any case, or a TransactionOperation
        if kind not in _KEYWORDS:
            raise ValueError(f"Unrecognized operation: {kind}")
        if set(keywords) - _KEYWORDS[kind]:
            raise ValueError(f"{kind} takes no {sorted(set(keywords) - _KEYWORDS[kind])}")
        if "PartitionKey" not in entity or "RowKey" not in entity:
            raise ValueError("PartitionKey and/or RowKey were not provided in entity")
        if partition is None:
            partition = entity["PartitionKey"]
        elif entity["PartitionKey"] != partition:
            raise ValueError("Partition Keys in the batch must all be the same.")
        parts.append(_part(kind, entity, keywords, table_url, version))
    return parts


def _part(kind: str, entity: dict[str, Any], keywords: dict[str, Any], table_url: str, version: str) -> Part:
    common = (("x-ms-version", version), ("DataServiceVersion", "3.0"))
    if kind == "create":
        body = _body(entity)
        head = (("Content-Type", "application/json"), ("Content-Length", str(len(body))), *common)
        return Part("POST", table_url, (*head, ("Accept", "application/json;odata=minimalmetadata")), body)
    url = f"{table_url}(PartitionKey='{_key(entity['PartitionKey'])}',RowKey='{_key(entity['RowKey'])}')"
    if kind == "delete":
        accept = ("Accept", "application/json;odata=minimalmetadata")
        return Part("DELETE", url, (*common, accept, ("If-Match", _if_match(keywords))), None)
    mode = keywords.get("mode", UpdateMode.MERGE)
    if mode not in (UpdateMode.REPLACE, UpdateMode.MERGE):
        raise ValueError(f"Mode type '{mode}' is not supported.")
    body = _body(entity)
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))), *common]
    headers.append(("Accept", "application/json"))
    if kind == "update":
        headers.append(("If-Match", _if_match(keywords)))
    return Part("PUT" if mode == UpdateMode.REPLACE else "PATCH", url, tuple(headers), body)


def _key(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("PartitionKey or RowKey must be of type string.")
    return quote(value.replace("'", "''"), safe="")


def _if_match(keywords: dict[str, Any]) -> str:
    etag, condition = keywords.get("etag"), keywords.get("match_condition") or MatchConditions.Unconditionally
    if condition == MatchConditions.IfNotModified:
        if not etag:
            raise ValueError("IfNotModified must be specified with etag.")
        return str(etag)
    if condition == MatchConditions.Unconditionally:
        if etag:
            raise ValueError("Etag is not supported for an Unconditional operation.")
        return "*"
    raise ValueError(f"Unsupported match condition: {condition}")


def _body(entity: dict[str, Any]) -> bytes:
    # As azure-core sets a JSON body (rest/_helpers.py, set_json_body): the same encoder, so the same bytes.
    return json.dumps(_edm_properties(entity), cls=AzureJSONEncoder).encode()


def _edm_properties(entity: dict[str, Any]) -> dict[str, Any]:
    """The SDK's `_add_entity_properties` with its common values (text, booleans, 32-bit integers, instants)
    converted inline: the SDK's lookup and call per property cost a third of a job row's conversion."""
    properties: dict[str, Any] = {}
    for name, value in entity.items():
        kind = type(value)
        if kind is str:
            properties[name] = value
            properties[name + "@odata.type"] = "Edm.String"
        elif kind is bool or (kind is int and -_INT32 <= value < _INT32):
            properties[name] = value
        elif isinstance(value, datetime):
            properties[name] = _to_entity_datetime(value)[1]
            properties[name + "@odata.type"] = "Edm.DateTime"
        elif value is not None:  # anything else (and a refusal) as the SDK converts it
            properties.update(_add_entity_properties({name: value}))
    return properties
