"""One entity at a time: ETags and their conflicts, what a missing table answers, values as they read back, and the
service's limits on keys and properties: the same on Azurite and in memory."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import EdmType, EntityProperty

from shared.store.tables import ConcurrencyError, int64
from shared.store.transaction import TransactionRefused
from tests.store.contract.backends import Backend, only_memory


class Color(StrEnum):
    RED = "Red"


def test_every_write_makes_a_new_etag_and_a_stale_one_is_refused(backend: Backend) -> None:
    table = backend.table()
    first = table.insert({"PartitionKey": "p", "RowKey": "r", "N": 1})
    assert table.get("p", "r") == {"PartitionKey": "p", "RowKey": "r", "N": 1, "etag": first}
    second = table.replace({"PartitionKey": "p", "RowKey": "r", "N": 2}, first)
    assert second != first
    with pytest.raises(ConcurrencyError):
        table.replace({"PartitionKey": "p", "RowKey": "r", "N": 3}, first)
    with pytest.raises(ConcurrencyError):
        table.insert({"PartitionKey": "p", "RowKey": "r", "N": 4})
    table.upsert({"PartitionKey": "p", "RowKey": "r", "N": 5})
    found = table.get("p", "r")
    assert found is not None and found["N"] == 5 and found["etag"] not in (first, second)
    with pytest.raises(ConcurrencyError):
        table.delete("p", "r", second)
    assert table.get("p", "r") == found


def test_a_delete_says_whether_it_removed_the_entity(backend: Backend) -> None:
    table = backend.table()
    etag = table.insert({"PartitionKey": "p", "RowKey": "r"})
    assert table.delete("p", "r", etag) is True
    assert table.delete("p", "r", etag) is False  # vanished: not this call's removal
    assert table.delete("p", "r") is False
    table.insert({"PartitionKey": "p", "RowKey": "s"})
    assert table.delete("p", "s") is True
    assert table.get("p", "s") is None


def test_a_replace_of_a_vanished_entity_is_a_conflict(backend: Backend) -> None:
    table = backend.table()
    etag = table.insert({"PartitionKey": "p", "RowKey": "r"})
    table.delete("p", "r")
    with pytest.raises(ConcurrencyError):
        table.replace({"PartitionKey": "p", "RowKey": "r"}, etag)
    assert table.get("p", "r") is None


def test_a_missing_table_reads_empty_and_refuses_writes(backend: Backend) -> None:
    table = backend.table(create=False)
    assert table.get("p", "r") is None
    assert table.delete("p", "r") is False
    with pytest.raises(ConcurrencyError):
        table.replace({"PartitionKey": "p", "RowKey": "r"}, "W/\"datetime'2026-01-01T00%3A00%3A00.0000000Z'\"")
    for write in (table.insert, table.upsert):
        with pytest.raises(ResourceNotFoundError):
            write({"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(ResourceNotFoundError):
        list(table.query("PartitionKey eq @pk", {"pk": "p"}))
    with pytest.raises(ResourceNotFoundError):
        table.page("PartitionKey eq @pk", {"pk": "p"}, 10)
    with pytest.raises(ResourceNotFoundError):
        table.count("PartitionKey eq @pk", {"pk": "p"}, 10)
    with pytest.raises(TransactionRefused) as refused:
        table.upsert_batch([{"PartitionKey": "p", "RowKey": "r"}, {"PartitionKey": "p", "RowKey": "s"}])
    assert refused.value.status_code == 404
    table.ensure_exists()
    table.ensure_exists()  # again: nothing happens
    table.insert({"PartitionKey": "p", "RowKey": "r"})
    assert [e["RowKey"] for e in table.query("PartitionKey eq @pk", {"pk": "p"})] == ["r"]


def test_a_table_name_the_service_refuses(backend: Backend) -> None:
    with pytest.raises(HttpResponseError) as refused:
        backend.storage.table(0, "bad-name").ensure_exists()
    assert refused.value.status_code == 400


def test_values_read_back_as_the_sdk_reads_them_from_the_service(backend: Backend) -> None:
    table = backend.table()
    at = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    table.insert(
        {
            "PartitionKey": "p",
            "RowKey": "r",
            "Text": "é|~'\"",
            "Empty": "",
            "Int": 5,
            "Negative": -(2**31),
            "Big": int64(2**40),
            "Small64": EntityProperty(3, EdmType.INT64),
            "Int32Typed": EntityProperty(7, EdmType.INT32),
            "DoubleTyped": EntityProperty(3, EdmType.DOUBLE),
            "Whole": 2.0,
            "Ratio": 1.5,
            "Flag": True,
            "At": at,
            "Day": datetime(2026, 1, 2, tzinfo=UTC),
            "Bytes": b"\x00\x01",
            "Id": uuid.UUID(int=5),
            "Color": Color.RED,
            "Nothing": None,
            "etag": "not stored",
        }
    )
    found = table.get("p", "r")
    assert found is not None
    queried = next(table.query("PartitionKey eq @pk", {"pk": "p"}))
    assert queried == found
    etag = found.pop("etag")
    assert isinstance(etag, str) and etag.startswith('W/"')
    assert found == {
        "PartitionKey": "p",
        "RowKey": "r",
        "Text": "é|~'\"",
        "Empty": "",
        "Int": 5,
        "Negative": -(2**31),
        "Big": EntityProperty(2**40, EdmType.INT64),
        "Small64": EntityProperty(3, EdmType.INT64),
        "Int32Typed": 7,
        "DoubleTyped": 3.0,
        "Whole": 2.0,
        "Ratio": 1.5,
        "Flag": True,
        "At": datetime(2026, 1, 2, 1, 4, 5, 123456, tzinfo=UTC),
        "Day": datetime(2026, 1, 2, tzinfo=UTC),
        "Bytes": b"\x00\x01",
        "Id": uuid.UUID(int=5),
        "Color": "Red",
    }
    kinds = {name: type(value) for name, value in found.items()}
    assert kinds["Int"] is int and kinds["Int32Typed"] is int and kinds["Flag"] is bool
    assert kinds["Whole"] is float and kinds["DoubleTyped"] is float and kinds["Color"] is str
    assert found["At"].utcoffset() == timedelta(0) and found["Day"].utcoffset() == timedelta(0)


def test_an_int_beyond_int32_must_say_int64(backend: Backend) -> None:
    table = backend.table()
    with pytest.raises(TypeError):
        table.insert({"PartitionKey": "p", "RowKey": "r", "N": 2**31})
    assert table.get("p", "r") is None


def test_a_property_holds_64_kib(backend: Backend) -> None:
    table = backend.table()
    table.upsert({"PartitionKey": "p", "RowKey": "full", "S": "é" * 32_768, "B": b"x" * 65_536})
    found = table.get("p", "full")
    assert found is not None and len(found["S"]) == 32_768 and len(found["B"]) == 65_536
    for too_much in ({"S": "é" * 32_769}, {"B": b"x" * 65_537}):
        with pytest.raises(HttpResponseError) as refused:
            table.upsert({"PartitionKey": "p", "RowKey": "over", **too_much})
        assert (refused.value.status_code, refused.value.error_code) == (400, "PropertyValueTooLarge")
    assert table.get("p", "over") is None


@pytest.mark.parametrize("key", ["a/b", "a\\b", "a#b", "a?b", "a\x01b", "a\x7fb", "k" * 513])
def test_a_key_the_service_refuses(backend: Backend, key: str) -> None:
    table = backend.table()
    table.insert({"PartitionKey": "p", "RowKey": "k" * 512})  # 1 KiB: the most a key may hold
    with pytest.raises(HttpResponseError) as refused:
        table.insert({"PartitionKey": "p", "RowKey": key})
    assert refused.value.status_code == 400
    with pytest.raises(HttpResponseError):
        table.insert({"PartitionKey": key, "RowKey": "r"})
    assert [e["RowKey"] for e in table.query("PartitionKey ge @lo", {"lo": ""})] == ["k" * 512]


def test_an_entity_holds_1_mib(backend: Backend) -> None:
    only_memory(backend, "Azurite 3.35 stores an entity of 2.4 MB")
    table = backend.table()
    # As the service counts: 4 + 2 * 2 (keys) + 15 * (8 + 2 * 3 (a name) + 4 + 2 * 32,768) bytes: 983,318; 17: over.
    table.upsert({"PartitionKey": "p", "RowKey": "r", **{f"P{i:02}": "x" * 32_768 for i in range(15)}})
    with pytest.raises(HttpResponseError) as refused:
        table.upsert({"PartitionKey": "p", "RowKey": "s", **{f"P{i:02}": "x" * 32_768 for i in range(17)}})
    assert (refused.value.status_code, refused.value.error_code) == (400, "EntityTooLarge")
    assert table.get("p", "s") is None


def test_an_entity_holds_252_properties(backend: Backend) -> None:
    only_memory(backend, "Azurite 3.35 stores 260 properties")
    table = backend.table()
    table.upsert({"PartitionKey": "p", "RowKey": "r", **{f"P{i}": i for i in range(252)}})
    with pytest.raises(HttpResponseError) as refused:
        table.upsert({"PartitionKey": "p", "RowKey": "s", **{f"P{i}": i for i in range(253)}})
    assert (refused.value.status_code, refused.value.error_code) == (400, "TooManyProperties")
