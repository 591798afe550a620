"""Entity-group transactions: all or nothing, one partition, at most 100 operations and 4 MiB, each row once;
what insert_batch and replace_batch answer for the rows they could not write: the same on Azurite and in memory."""

from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError

from shared.store.tables import BatchFailed, Entity, Table
from shared.store.transaction import TransactionRefused
from tests.store.contract.backends import Backend


def _rows(table: Table) -> dict[str, object]:
    return {e["RowKey"]: e.get("N") for e in table.query("PartitionKey ge @lo", {"lo": ""})}


def _entities(count: int, partition: str = "p", n: int = 0) -> list[Entity]:
    return [{"PartitionKey": partition, "RowKey": f"r{i:03}", "N": n} for i in range(count)]


def test_a_transaction_of_100_writes_them_all(backend: Backend) -> None:
    table = backend.table()
    table.upsert_batch(_entities(100))
    table.upsert_batch(_entities(100, n=1))  # upserts replace
    assert _rows(table) == {f"r{i:03}": 1 for i in range(100)}


def test_a_transaction_of_101_is_refused_whole(backend: Backend) -> None:
    table = backend.table()
    with pytest.raises(HttpResponseError):
        table.upsert_batch(_entities(101))
    with pytest.raises(HttpResponseError):
        table.insert_batch(_entities(101))
    assert _rows(table) == {}


def test_a_transaction_over_two_partitions_is_refused_before_it_is_sent(backend: Backend) -> None:
    table = backend.table()
    both = [*_entities(2), *_entities(2, partition="q")]
    with pytest.raises(ValueError, match="Partition Keys"):
        table.upsert_batch(both)
    with pytest.raises(ValueError, match="Partition Keys"):
        table.insert_batch(both)
    assert _rows(table) == {}


def test_a_transaction_naming_a_row_twice_is_refused_at_the_second(backend: Backend) -> None:
    table = backend.table()
    twice = [*_entities(3), _entities(1, n=9)[0]]
    for write in (table.upsert_batch, table.insert_batch):
        with pytest.raises(TransactionRefused) as refused:
            write(twice)
        assert (refused.value.index, refused.value.status_code, refused.value.error_code) == (
            3,
            400,
            "InvalidDuplicateRow",
        )
    table.insert({"PartitionKey": "p", "RowKey": "r000", "N": 5})
    with pytest.raises(BatchFailed):
        table.delete_batch("p", ["r000", "r000"])
    assert _rows(table) == {"r000": 5}


def test_a_transaction_over_4_mib_is_refused(backend: Backend) -> None:
    table = backend.table()
    heavy = [{"PartitionKey": "p", "RowKey": f"r{i:03}", "A": "a" * 32_000, "B": "b" * 32_000} for i in range(70)]
    with pytest.raises(HttpResponseError) as refused:
        table.upsert_batch(heavy)
    assert refused.value.status_code == 413
    assert _rows(table) == {}


def test_an_empty_insert_or_replace_batch_sends_nothing(backend: Backend) -> None:
    # An empty upsert_batch or delete_batch is refused: Azurite answers 500 (retried for seconds), the memory
    # store 400; the store never sends one.
    table = backend.table()
    assert table.insert_batch([]) == [] and table.replace_batch([]) == []
    assert _rows(table) == {}


def test_a_refused_operation_leaves_the_whole_transaction_undone(backend: Backend) -> None:
    table = backend.table()
    table.insert({"PartitionKey": "p", "RowKey": "r001", "N": 7})
    with pytest.raises(TransactionRefused) as refused:
        table.upsert_batch([*_entities(2), {"PartitionKey": "p", "RowKey": "big", "S": "x" * 40_000}])
    assert (refused.value.index, refused.value.status_code, refused.value.error_code) == (
        2,
        400,
        "PropertyValueTooLarge",
    )
    assert _rows(table) == {"r001": 7}
    with pytest.raises(BatchFailed):
        table.delete_batch("p", ["r001", "gone"])
    assert _rows(table) == {"r001": 7}


def test_insert_batch_answers_none_for_the_rows_that_exist(backend: Backend) -> None:
    table = backend.table()
    table.insert({"PartitionKey": "p", "RowKey": "r001", "N": 7})
    table.insert({"PartitionKey": "p", "RowKey": "r003", "N": 7})
    etags = table.insert_batch(_entities(5))
    assert [etag is None for etag in etags] == [False, True, False, True, False]
    assert _rows(table) == {"r000": 0, "r001": 7, "r002": 0, "r003": 7, "r004": 0}
    for i in (0, 2, 4):
        found = table.get("p", f"r{i:03}")
        assert found is not None and found["etag"] == etags[i]


def test_insert_batch_gives_up_after_its_attempts(backend: Backend) -> None:
    table = backend.table()
    for i in (0, 1):
        table.insert({"PartitionKey": "p", "RowKey": f"r{i:03}", "N": 7})
    # Each refusal costs a transaction: two taken rows use up two attempts, and the third row is not written.
    assert table.insert_batch(_entities(3), attempts=2) == [None, None, None]
    assert _rows(table) == {"r000": 7, "r001": 7}


def test_replace_batch_writes_the_unchanged_and_answers_none_for_the_changed(backend: Backend) -> None:
    table = backend.table()
    etags = [table.insert(e) for e in _entities(3)]
    moved = table.replace({"PartitionKey": "p", "RowKey": "r001", "N": 5}, etags[1])
    answered = table.replace_batch([(e, etag) for e, etag in zip(_entities(3, n=1), etags, strict=True)])
    assert answered[1] is None and None not in (answered[0], answered[2])
    assert _rows(table) == {"r000": 1, "r001": 5, "r002": 1}
    found = table.get("p", "r001")
    assert found is not None and found["etag"] == moved
    table.delete("p", "r002")  # vanished: as refused as a changed one
    fresh = table.get("p", "r000")
    assert fresh is not None
    second = table.replace_batch(
        [({"PartitionKey": "p", "RowKey": "r002", "N": 2}, str(answered[2])), (fresh, fresh["etag"])]
    )
    assert second[0] is None and second[1] is not None


def test_replace_batch_gives_up_after_its_attempts(backend: Backend) -> None:
    table = backend.table()
    etags = [table.insert(e) for e in _entities(3)]
    stale = [etags[0], etags[0], etags[2]]  # the first two no longer match (r001 never had r000's ETag)
    table.replace({"PartitionKey": "p", "RowKey": "r000", "N": 5}, etags[0])
    assert table.replace_batch([(e, etag) for e, etag in zip(_entities(3, n=1), stale, strict=True)]) == [None] * 3
    assert _rows(table) == {"r000": 5, "r001": 0, "r002": 0}


def test_delete_batch_and_delete_partition_remove_rows_of_one_partition(backend: Backend) -> None:
    table = backend.table()
    for batch in (_entities(100), [{"PartitionKey": "p", "RowKey": f"s{i:03}"} for i in range(50)]):
        table.upsert_batch(batch)
    table.upsert_batch(_entities(3, partition="q"))
    table.delete_batch("p", [f"r{i:03}" for i in range(10)])
    assert len(_rows(table)) == 143
    table.delete_partition("p")
    assert [e["PartitionKey"] for e in table.query("PartitionKey ge @lo", {"lo": ""})] == ["q"] * 3
