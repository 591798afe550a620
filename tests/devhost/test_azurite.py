"""The local Azurite as the app's storage clients meet it: an idle connection stays open as real storage keeps
it (Azurite's own default closes it after 5 s, and a request sent as it closes is lost); an entity is found by
both its keys, a query naming a partition answers its rows, and a replaced entity reads back as written (a failed
transaction's as it was), exactly, by the lookups and the replace in place devhost/azurite_lookups.js gives it
(their cost does not grow with the partition or the table: bench/, not a test, shows that)."""

from __future__ import annotations

import http.client
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from azure.core import MatchConditions
from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import TableServiceClient, TableTransactionError, UpdateMode

from devhost.azurite import KEYED_LOOKUPS, Azurite
from shared.store.tables import Entity

# Keys LokiJS's index compares as one number: the lookup narrows by that index, then must compare both keys exactly.
NUMBERS = ("1", "01", "1.0")


def test_an_idle_connection_is_kept_longer_than_azurite_keeps_it_by_default(azurite: Azurite) -> None:
    connections = [
        http.client.HTTPConnection("127.0.0.1", port, timeout=10) for port in (azurite.ports.table, azurite.ports.queue)
    ]
    try:
        for connection in connections:
            connection.request("GET", "/devstoreaccount1?comp=list")
            connection.getresponse().read()  # refused without a signature; what matters is the connection
        time.sleep(6)
        for connection in connections:
            connection.request("GET", "/devstoreaccount1?comp=list")  # the same connection, 6 s idle
            assert connection.getresponse().status > 0
    finally:
        for connection in connections:
            connection.close()


def test_entities_whose_keys_read_as_the_same_number_are_each_found_written_and_deleted_exactly(
    azurite: Azurite,
) -> None:
    environment = Path(f"/proc/{azurite.pid}/environ").read_bytes().decode()
    assert f'--require "{KEYED_LOOKUPS}"' in environment  # the lookup is Azurite's
    assert "azurite_lookups" not in (azurite.location / "azurite.log").read_text()  # it found Azurite's modules
    service = TableServiceClient.from_connection_string(azurite.connection_string)
    table = service.create_table(f"lookups{uuid.uuid4().hex[:8]}")
    keys = [(partition, row) for partition in NUMBERS for row in NUMBERS]
    for partition, row in keys:
        table.upsert_entity({"PartitionKey": partition, "RowKey": row, "of": f"{partition}/{row}"})
    table.submit_transaction(
        [("upsert", {"PartitionKey": "01", "RowKey": row, "of": f"01/{row}", "again": True}) for row in NUMBERS]
    )
    for partition, row in keys:
        found = table.get_entity(partition, row)
        assert found["of"] == f"{partition}/{row}"
        assert found.get("again", False) == (partition == "01")
    table.delete_entity("1", "01")
    try:
        table.get_entity("1", "01")
        raise AssertionError("1/01 was deleted")
    except ResourceNotFoundError:
        pass
    left = sorted(entity["of"] for entity in table.list_entities())
    assert left == sorted(f"{p}/{r}" for p, r in keys if (p, r) != ("1", "01"))


# Each filter, and what it matches, told in Python: the rows Azurite answers must be these.
FILTERS: dict[str, Callable[[Entity], bool]] = {
    "PartitionKey eq 'a'": lambda e: e["PartitionKey"] == "a",
    "PartitionKey eq '01'": lambda e: e["PartitionKey"] == "01",
    "PartitionKey eq 'it''s'": lambda e: e["PartitionKey"] == "it's",
    "n lt 3 and PartitionKey eq '1'": lambda e: e["n"] < 3 and e["PartitionKey"] == "1",
    "PartitionKey eq 'a' and ( RowKey eq 'r1' or RowKey eq 'r2' )": lambda e: (
        e["PartitionKey"] == "a" and e["RowKey"] in ("r1", "r2")
    ),
    "PartitionKey eq 'a' and n eq 1 or n eq 4": lambda e: (e["PartitionKey"] == "a" and e["n"] == 1) or e["n"] == 4,
    "not (PartitionKey eq 'a') and n eq 0": lambda e: e["PartitionKey"] != "a" and e["n"] == 0,
    "PartitionKey eq 'a' and PartitionKey eq '1'": lambda e: False,
}


def test_a_query_naming_a_partition_answers_exactly_the_rows_its_filter_matches(azurite: Azurite) -> None:
    service = TableServiceClient.from_connection_string(azurite.connection_string)
    table = service.create_table(f"queries{uuid.uuid4().hex[:8]}")
    for partition in ("a", "b", "it's", *NUMBERS):
        table.submit_transaction([("upsert", {"PartitionKey": partition, "RowKey": f"r{n}", "n": n}) for n in range(6)])
    everything = list(table.list_entities())  # no filter: Azurite's own scan
    assert len(everything) == 36
    for query, matches in FILTERS.items():
        answered = sorted((e["PartitionKey"], e["RowKey"]) for e in table.query_entities(query))
        assert answered == sorted((e["PartitionKey"], e["RowKey"]) for e in everything if matches(e)), query


def test_an_entity_replaced_reads_back_as_written_and_a_failed_transaction_leaves_it_as_it_was(
    azurite: Azurite,
) -> None:
    service = TableServiceClient.from_connection_string(azurite.connection_string)
    table = service.create_table(f"replaced{uuid.uuid4().hex[:8]}")
    rows = {(p, f"r{n}"): {"n": n, "old": True} for p in ("a", *NUMBERS) for n in range(4)}
    for (partition, row), values in rows.items():
        table.create_entity({"PartitionKey": partition, "RowKey": row, **values})
    first = table.get_entity("01", "r1")

    # Replaced through an update under its ETag, then by upserts in a transaction: what is not written is gone.
    table.update_entity(
        {"PartitionKey": "01", "RowKey": "r1", "n": 10},
        mode=UpdateMode.REPLACE,
        etag=first.metadata["etag"],
        match_condition=MatchConditions.IfNotModified,
    )
    rows["01", "r1"] = {"n": 10}
    replace = {"mode": UpdateMode.REPLACE}
    table.submit_transaction(
        [("upsert", {"PartitionKey": "a", "RowKey": f"r{n}", "n": 20 + n}, replace) for n in range(3)]
    )
    rows.update({("a", f"r{n}"): {"n": 20 + n} for n in range(3)})
    try:  # the old ETag no longer matches: refused, nothing changed
        table.update_entity(
            {"PartitionKey": "01", "RowKey": "r1", "n": 99},
            mode=UpdateMode.REPLACE,
            etag=first.metadata["etag"],
            match_condition=MatchConditions.IfNotModified,
        )
        raise AssertionError("an update under a stale ETag was taken")
    except ResourceModifiedError:
        pass
    try:  # a replace, then a create of a row that exists: the transaction fails and the replace is undone
        table.submit_transaction(
            [
                ("upsert", {"PartitionKey": "1", "RowKey": "r0", "n": 30}, replace),
                ("create", {"PartitionKey": "1", "RowKey": "r1", "n": 31}),
            ]
        )
        raise AssertionError("a transaction creating a row that exists was taken")
    except TableTransactionError:
        pass
    table.delete_entity("a", "r0")  # a replaced row is deleted by its keys, and the rows after it stay found
    del rows["a", "r0"]
    table.create_entity({"PartitionKey": "a", "RowKey": "r9", "n": 9})
    rows["a", "r9"] = {"n": 9}

    assert table.get_entity("01", "r1").metadata["etag"] != first.metadata["etag"]
    for (partition, row), values in rows.items():
        found = table.get_entity(partition, row)
        assert {key: found[key] for key in found if key not in ("PartitionKey", "RowKey")} == values, (partition, row)
    listed = [(e["PartitionKey"], e["RowKey"], e["n"]) for e in table.list_entities()]
    assert listed == sorted((p, r, v["n"]) for (p, r), v in rows.items())  # key order, each row once
    for partition in ("a", *NUMBERS):
        queried = [(e["RowKey"], e["n"]) for e in table.query_entities(f"PartitionKey eq '{partition}'")]
        assert queried == sorted((r, v["n"]) for (p, r), v in rows.items() if p == partition), partition
