"""Table queries sent and read by shared/store/entity_query.py answer as the SDK's own query does: each row converted
as `_convert_to_entity` converts it (generated rows, every EDM type, annotations before or after their property),
and on a real Azurite the same rows, pages, continuations and errors as `TableClient.query_entities`."""

from __future__ import annotations

import base64
import math
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty, TableClient
from azure.data.tables import _deserialize as sdk
from hypothesis import given
from hypothesis import strategies as st

from devhost.azurite import Azurite
from shared.settings import StorageSettings
from shared.store.azure_table import AzureTable
from shared.store.clients import table_service
from shared.store.entity_query import entity_of, query_page

compared: list[int] = []


def same(got: Any, expected: Any) -> bool:
    """Equal in type and value (NaN equal to NaN), datetimes also in the service text they carry."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, float) and math.isnan(expected):
        return math.isnan(got)
    if isinstance(expected, EntityProperty):
        return same(got.value, expected.value) and got.edm_type == expected.edm_type
    if isinstance(expected, sdk.TablesEntityDatetime):
        return bool(got == expected and got.tables_service_value == expected.tables_service_value)
    return bool(got == expected)


def as_the_sdk_reads(element: dict[str, Any]) -> dict[str, Any]:
    entity = sdk._convert_to_entity(element)
    return dict(entity) | {"etag": entity.metadata.get("etag")}


def assert_rows_equal(got: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    for mine, theirs in zip(got, expected, strict=True):
        assert sorted(mine) == sorted(theirs)
        for name in theirs:
            assert same(mine[name], theirs[name]), (name, mine[name], theirs[name])
        compared.append(len(theirs))


WIRE_INSTANT = st.datetimes(min_value=datetime(1601, 1, 1), max_value=datetime(9999, 12, 31)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"
)
# (annotation, value) as the service writes a property of each kind; None: no annotation.
TYPED = st.one_of(
    st.tuples(st.none(), st.text(max_size=20)),
    st.tuples(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    st.tuples(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.none(), st.booleans()),
    st.tuples(st.none(), st.none()),
    st.tuples(st.just("Edm.DateTime"), WIRE_INSTANT),
    st.tuples(st.just("Edm.Int64"), st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str)),
    st.tuples(st.just("Edm.Int32"), st.integers(min_value=-(2**31), max_value=2**31 - 1)),
    st.tuples(st.just("Edm.Guid"), st.uuids().map(str)),
    st.tuples(st.just("Edm.Binary"), st.binary(max_size=20).map(lambda b: base64.b64encode(b).decode())),
    st.tuples(st.just("Edm.Double"), st.sampled_from(["NaN", "Infinity", "-Infinity"])),
    st.tuples(st.just("Edm.Double"), st.floats(allow_nan=False, allow_infinity=False)),
    st.tuples(st.just("Edm.String"), st.text(max_size=20)),
    st.tuples(st.just("Edm.Boolean"), st.booleans()),  # no SDK converter: its EntityProperty fallback
)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda n: n not in ("PartitionKey", "RowKey", "Timestamp")
)


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    element: dict[str, Any] = {}
    if draw(st.booleans()):
        element["odata.etag"] = f"W/\"datetime'{draw(WIRE_INSTANT).replace(':', '%3A')}'\""
    for key in ("PartitionKey", "RowKey"):
        if draw(st.booleans()):
            element[key] = draw(st.one_of(st.text(max_size=10), st.none()))
    if draw(st.booleans()):
        element["Timestamp"] = draw(WIRE_INSTANT)
    for name, (kind, value) in draw(st.dictionaries(NAMES, TYPED, max_size=8)).items():
        after = draw(st.booleans())
        if kind and not after:
            element[f"{name}@odata.type"] = kind
        element[name] = value
        if kind and after:
            element[f"{name}@odata.type"] = kind
    return element


@given(rows())
def test_rows_read_as_the_sdk_reads_them(element: dict[str, Any]) -> None:
    before = len(compared)
    assert_rows_equal([entity_of(element)], [as_the_sdk_reads(element)])
    assert len(compared) == before + 1


def test_wide_numbers_and_annotations_after_their_property() -> None:
    """The cases the generated rows may miss, named: an unannotated number outside Int32, an annotation that
    follows its property, and a row without an ETag, whose ETag the SDK makes from its Timestamp."""
    element = {
        "PartitionKey": "p",
        "RowKey": "r",
        "Timestamp": "2026-12-01T03:30:00.1234567Z",
        "Wide": 2**40,
        "When": "2026-12-01T03:30:00Z",
        "When@odata.type": "Edm.DateTime",
    }
    got = entity_of(element)
    assert got["Wide"] == EntityProperty(2**40, EdmType.INT64)
    assert type(got["When"]) is sdk.TablesEntityDatetime
    assert got["etag"] == "W/\"datetime'2026-12-01T03%3A30%3A00.1234567Z'\""
    assert_rows_equal([got], [as_the_sdk_reads(element)])


@pytest.fixture(scope="module")
def table(azurite: Azurite) -> Iterator[TableClient]:
    """A table of 7 rows in 2 partitions, holding every EDM type, built as the store builds its clients."""
    service = table_service(StorageSettings(connection_string=azurite.connection_string))
    client = service.create_table(f"q{uuid.uuid4().hex[:10]}")
    for partition in ("a", "b'quoted"):
        for n in range(3 if partition == "a" else 4):
            client.upsert_entity(
                {
                    "PartitionKey": partition,
                    "RowKey": f"r{n}",
                    "Text": f"row {n} ü",
                    "Small": n,
                    "Wide": EntityProperty(2**40 + n, EdmType.INT64),
                    "Ratio": n / 3,
                    "Odd": n % 2 == 1,
                    "When": datetime(2026, 12, 1, 3, n, 7, 123456, tzinfo=UTC),
                    "Id": uuid.UUID(int=n + 1),
                    "Blob": bytes([n, 255, 0]),
                }
            )
    yield client
    service.delete_table(client.table_name)


def sdk_pages(client: TableClient, query_filter: str, parameters: Any, select: Any, size: Any) -> list[Any]:
    pages = client.query_entities(query_filter, parameters=parameters, select=select, results_per_page=size).by_page()
    found = []
    for page in pages:
        rows = [dict(e) | {"etag": e.metadata.get("etag")} for e in page]
        found.append((rows, getattr(pages, "continuation_token", None)))
    return found


def our_pages(client: TableClient, query_filter: str, parameters: Any, select: Any, size: Any) -> list[Any]:
    found, continuation = [], None
    while True:
        rows, continuation = query_page(client, query_filter, parameters, select, size, continuation)
        found.append((rows, continuation))
        if continuation is None:
            return found


QUERIES = [
    ("PartitionKey eq @pk", {"pk": "a"}, None, None),
    ("PartitionKey eq @pk", {"pk": "b'quoted"}, None, 3),
    ("PartitionKey ge @pk", {"pk": ""}, ["RowKey", "When", "Absent"], 2),
    ("Small gt 0 and Odd eq true", None, None, 1),
    ("RowKey eq 'nothing'", None, None, None),
]


@pytest.mark.parametrize(("query_filter", "parameters", "select", "size"), QUERIES)
def test_pages_and_continuations_as_the_sdk_answers(
    table: TableClient, query_filter: str, parameters: Any, select: Any, size: Any
) -> None:
    expected = sdk_pages(table, query_filter, parameters, select, size)
    got = our_pages(table, query_filter, parameters, select, size)
    assert [c for _, c in got] == [c for _, c in expected]
    before = len(compared)
    for (mine, _), (theirs, _) in zip(got, expected, strict=True):
        assert_rows_equal(mine, theirs)
    assert len(compared) - before == sum(len(rows) for rows, _ in expected)
    if size and query_filter != "RowKey eq 'nothing'":
        assert len(expected) > 1, "a query meant to page answered in one page"


def test_the_store_reads_through_it(table: TableClient) -> None:
    """AzureTable's query and page, the store's only ways to read many rows, answer the SDK's rows and tokens."""
    store = AzureTable(table)
    everything = sdk_pages(table, "PartitionKey ge ''", None, None, None)[0][0]
    assert_rows_equal(list(store.query("PartitionKey ge ''", page_size=2)), everything)
    assert len(everything) == 7
    first, token = store.page("PartitionKey eq @pk", {"pk": "b'quoted"}, 3)
    (theirs, their_token), *_ = sdk_pages(table, "PartitionKey eq @pk", {"pk": "b'quoted"}, None, 3)
    assert token == their_token and token is not None
    assert_rows_equal(first, theirs)
    rest, end = store.page("PartitionKey eq @pk", {"pk": "b'quoted"}, 3, token)
    assert ([r["RowKey"] for r in rest], end) == (["r3"], None)


@pytest.mark.parametrize("query_filter", ["PartitionKey eq 'a'", "PartitionKey eqq 'a'"])
def test_errors_as_the_sdk_raises_them(table: TableClient, azurite: Azurite, query_filter: str) -> None:
    """A table that is not there, and a filter the service refuses: the same error type, status and code."""
    service = table_service(StorageSettings(connection_string=azurite.connection_string))
    clients = [service.get_table_client("missing" + uuid.uuid4().hex[:8])] if "eqq" not in query_filter else [table]
    for client in clients:
        with pytest.raises(HttpResponseError) as theirs:
            sdk_pages(client, query_filter, None, None, None)
        with pytest.raises(HttpResponseError) as mine:
            our_pages(client, query_filter, None, None, None)
        assert type(mine.value) is type(theirs.value)
        assert (mine.value.status_code, getattr(mine.value, "error_code", None)) == (
            theirs.value.status_code,
            getattr(theirs.value, "error_code", None),
        )
        assert mine.value.status_code in (400, 404)
