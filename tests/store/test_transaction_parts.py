"""A transaction's sub-requests written by hand (shared/store/transaction_parts.py) are the SDK's, byte for byte:
method, URL, headers in order and body, over generated keys, entities and every operation shape; what the SDK
refuses is refused alike. What they do on the wire is tests/store/test_transactions.py's (real Azurite)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from azure.core import MatchConditions
from azure.data.tables import EdmType, EntityProperty, TableClient, UpdateMode
from azure.data.tables._table_batch import TableBatchOperations
from hypothesis import given
from hypothesis import strategies as st

from shared.model import JobState
from shared.store.transaction_parts import Operation, Part, parts_of

CLIENT = TableClient.from_connection_string(
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
    "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;",
    "jobs",
)
BASE = f"{CLIENT.scheme}://{CLIENT._primary_hostname}"
ETAG = "W/\"datetime'2026-12-01T00%3A41%3A00.1234567Z'\""

SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("create", {}),
    ("upsert", {}),
    ("upsert", {"mode": UpdateMode.REPLACE}),
    ("upsert", {"mode": UpdateMode.MERGE}),
    ("update", {}),
    ("update", {"mode": UpdateMode.REPLACE, "etag": ETAG, "match_condition": MatchConditions.IfNotModified}),
    ("update", {"mode": UpdateMode.MERGE, "etag": ETAG, "match_condition": MatchConditions.IfNotModified}),
    ("update", {"mode": UpdateMode.REPLACE, "match_condition": MatchConditions.Unconditionally}),
    ("delete", {}),
    ("delete", {"etag": ETAG, "match_condition": MatchConditions.IfNotModified}),
]

keys = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
values = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=30),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(lambda n: EntityProperty(n, EdmType.INT64)),
    st.booleans(),
    st.none(),  # left out, as the SDK leaves it
    st.sampled_from(list(JobState)),  # a text enum: the SDK's own conversion
    st.floats(),
    st.datetimes(min_value=datetime(1601, 1, 2), timezones=st.just(UTC)),
    st.binary(max_size=20),
)
properties = st.dictionaries(st.from_regex(r"[A-Z][A-Za-z0-9]{0,10}", fullmatch=True), values, max_size=6)


def by_the_sdk(operations: list[Operation]) -> list[Part]:
    batch = TableBatchOperations(
        config=CLIENT._client._config,
        endpoint=BASE,
        table_name=CLIENT.table_name,
        is_cosmos_endpoint=CLIENT._cosmos_endpoint,
    )
    for operation in operations:
        batch.add_operation(operation)
    return [
        Part(
            request.method,
            request.url,
            tuple(request.headers.items()),
            None if request.content is None else str(request.content).encode(),
        )
        for request in batch.requests
    ]


def by_hand(operations: list[Operation]) -> list[Part]:
    return parts_of(BASE, CLIENT.table_name, CLIENT.api_version, operations)


@given(keys, st.lists(st.tuples(keys, properties, st.sampled_from(SHAPES)), min_size=1, max_size=len(SHAPES)))
def test_sub_requests_are_the_sdks(partition: str, rows: list[tuple[str, dict[str, Any], Any]]) -> None:
    operations: list[Operation] = []
    for row, props, (kind, keywords) in rows:
        entity = {"PartitionKey": partition, "RowKey": row, **props}
        operations.append((kind, entity, keywords) if keywords else (kind, entity))
    expected = by_the_sdk(operations)
    assert by_hand(operations) == expected
    assert len(expected) == len(operations)


def test_every_shape_once() -> None:
    """Each shape in one transaction, keys with quotes, slashes and non-ASCII letters: equal, and all present."""
    entity = {"PartitionKey": "sub|rg(prod).été|jobs~7C", "RowKey": "it's/a?#%20row", "At": datetime(2026, 1, 1)}
    operations: list[Operation] = [(kind, dict(entity), keywords) for kind, keywords in SHAPES]
    parts = by_hand(operations)
    assert parts == by_the_sdk(operations)
    assert {part.method for part in parts} == {"POST", "PUT", "PATCH", "DELETE"}
    assert "PartitionKey='sub%7Crg%28prod%29.%C3%A9t%C3%A9%7Cjobs~7C'" in parts[1].url
    assert "RowKey='it%27%27s%2Fa%3F%23%2520row'" in parts[1].url


@pytest.mark.parametrize(
    "operations",
    [
        [("create", {"PartitionKey": "p"})],
        [("create", {"PartitionKey": "p", "RowKey": "a"}), ("create", {"PartitionKey": "q", "RowKey": "b"})],
        [("replace", {"PartitionKey": "p", "RowKey": "a"})],
        [("update", {"PartitionKey": "p", "RowKey": "a"}, {"match_condition": MatchConditions.IfNotModified})],
        [("delete", {"PartitionKey": "p", "RowKey": "a"}, {"etag": ETAG})],
        [("update", {"PartitionKey": "p", "RowKey": "a"}, {"mode": "sideways"})],
        [("upsert", {"PartitionKey": "p", "RowKey": 7})],
        [("delete", {"PartitionKey": 7, "RowKey": "a"})],
        [("upsert", {"PartitionKey": "p", "RowKey": "a", "Wide": 2**31})],  # an int wider than Edm.Int32
        [("upsert", {"PartitionKey": "p", "RowKey": "a", "Wide": -(2**31) - 1})],
    ],
)
def test_refused_as_the_sdk_refuses(operations: list[Operation]) -> None:
    with pytest.raises((ValueError, TypeError)) as sdk:
        by_the_sdk(operations)
    with pytest.raises(sdk.type):
        by_hand(operations)


def test_a_keyword_it_does_not_write_is_refused() -> None:
    """The SDK would hand an unknown keyword to azure-core; here nothing is sent in its stead."""
    with pytest.raises(ValueError, match="timeout"):
        by_hand([("upsert", {"PartitionKey": "p", "RowKey": "a"}, {"timeout": 5})])
