"""Entity-group transactions sent with the envelope written by store/transaction.py, on real Azurite: what they
store reads back as what the SDK's own `submit_transaction` stores, their ETags are the rows', and a refused
transaction names the operation the service refused, with its status, and changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import EdmType, EntityProperty, TableClient, TableServiceClient, UpdateMode

from devhost.azurite import Azurite
from shared.store.transaction import TransactionRefused, responses, submit

# A resource group name may hold parentheses, periods and non-ASCII letters; our keys also hold `|` and `~`.
PARTITION = "sub|rg(prod).été|jobs~7C"


@pytest.fixture
def table(azurite: Azurite) -> Iterator[TableClient]:
    service = TableServiceClient.from_connection_string(azurite.connection_string)
    client = service.create_table(f"tx{uuid.uuid4().hex[:12]}")
    yield client
    client.delete_table()


def _entity(row: str, n: int) -> dict[str, object]:
    return {
        "PartitionKey": PARTITION,
        "RowKey": row,
        "Count": n,
        "Big": EntityProperty(2**40 + n, EdmType.INT64),
        "At": datetime(2026, 11, 25, 19, n % 60, n % 60, 123456, tzinfo=UTC),
        "Text": 'line\r\n--batch_x\r\n"quoted" é ' * 3,  # what looks like a delimiter inside a value stays data
        "Flag": n % 2 == 0,
        "Ratio": n / 3,
    }


def _stored(table: TableClient, row: str) -> dict[str, object]:
    found = table.get_entity(PARTITION, row)
    return {key: value for key, value in found.items()} | {"etag": found.metadata["etag"]}


def test_what_a_transaction_stores_reads_back_as_the_sdk_stores_it(table: TableClient) -> None:
    ours = [_entity(f"ours|{n}", n) for n in range(100)]
    etags = submit(table, [("create", e) for e in ours])
    table.submit_transaction([("create", {**_entity(f"sdk|{n}", n)}) for n in range(100)])
    for n, etag in enumerate(etags):
        mine, theirs = _stored(table, f"ours|{n}"), _stored(table, f"sdk|{n}")
        assert mine["etag"] == etag
        assert {k: v for k, v in mine.items() if k not in ("RowKey", "etag")} == {
            k: v for k, v in theirs.items() if k not in ("RowKey", "etag")
        }


def test_upserts_replacements_and_deletes_answer_each_rows_etag(table: TableClient) -> None:
    rows = [_entity(f"r{n}", n) for n in range(5)]
    submit(table, [("upsert", e, {"mode": UpdateMode.REPLACE}) for e in rows])
    etags = [str(_stored(table, f"r{n}")["etag"]) for n in range(5)]
    changed = [{**e, "Count": 100} for e in rows]
    answered = submit(
        table,
        [
            ("update", e, {"mode": UpdateMode.REPLACE, "etag": etag, "match_condition": MatchConditions.IfNotModified})
            for e, etag in zip(changed, etags, strict=True)
        ],
    )
    assert answered == [_stored(table, f"r{n}")["etag"] for n in range(5)]
    assert {_stored(table, f"r{n}")["Count"] for n in range(5)} == {100}
    submit(table, [("delete", {"PartitionKey": PARTITION, "RowKey": f"r{n}"}) for n in range(5)])
    assert list(table.list_entities()) == []


@pytest.mark.parametrize(
    ("refused_at", "status", "code"),
    [(0, 409, "EntityAlreadyExists"), (3, 409, "EntityAlreadyExists"), (4, 412, "UpdateConditionNotSatisfied")],
)
def test_a_refused_transaction_names_the_operation_and_changes_nothing(
    table: TableClient, refused_at: int, status: int, code: str
) -> None:
    rows = [_entity(f"r{n}", n) for n in range(6)]
    submit(table, [("create", rows[refused_at])])
    before = _stored(table, f"r{refused_at}")
    stale = "W/\"datetime'2020-01-01T00%3A00%3A00.0000000Z'\""
    operations: list[tuple[object, ...]] = [("create", e) for e in rows]
    if status == 412:
        operations[refused_at] = (
            "update",
            {**rows[refused_at], "Count": -1},
            {"mode": UpdateMode.REPLACE, "etag": stale, "match_condition": MatchConditions.IfNotModified},
        )
    with pytest.raises(TransactionRefused) as refused:
        submit(table, operations)
    assert (refused.value.index, refused.value.status_code, refused.value.error_code) == (refused_at, status, code)
    assert [e["RowKey"] for e in table.list_entities()] == [f"r{refused_at}"]
    assert _stored(table, f"r{refused_at}") == before


def test_a_delete_of_a_missing_row_is_refused_as_not_found(table: TableClient) -> None:
    submit(table, [("create", _entity("here", 1))])
    with pytest.raises(TransactionRefused) as refused:
        submit(table, [("delete", {"PartitionKey": PARTITION, "RowKey": "here"}), ("delete", {**_entity("gone", 2)})])
    assert (refused.value.index, refused.value.status_code) == (1, 404)
    assert [e["RowKey"] for e in table.list_entities()] == ["here"]


def test_a_transaction_on_a_missing_table_raises_not_found(table: TableClient, azurite: Azurite) -> None:
    missing = TableClient.from_connection_string(azurite.connection_string, "nosuchtable")
    with pytest.raises((ResourceNotFoundError, TransactionRefused)) as raised:
        submit(missing, [("create", _entity("x", 1))])
    assert raised.value.status_code == 404


def test_an_answer_is_read_whatever_its_line_ends() -> None:
    """Real Table Storage ends lines with CRLF; a bare LF (or a quoted boundary) reads the same."""
    crlf = (
        "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n"
        "--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
        'HTTP/1.1 204 No Content\r\nETag: W/"one"\r\n\r\n\r\n'
        "--changesetresponse_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
        'HTTP/1.1 201 Created\r\nETag: W/"two"\r\nContent-Type: application/json\r\n\r\n{"a": 1}\r\n'
        "--changesetresponse_2--\r\n--batchresponse_1--\r\n"
    )
    for body, content_type in [
        (crlf, "multipart/mixed; boundary=batchresponse_1"),
        (crlf.replace("\r\n", "\n"), 'multipart/mixed; boundary="batchresponse_1"'),
    ]:
        answers = responses(body.encode(), content_type)
        assert [(status, headers.get("etag"), data) for status, headers, data in answers] == [
            (204, 'W/"one"', b""),
            (201, 'W/"two"', b'{"a": 1}'),
        ]
