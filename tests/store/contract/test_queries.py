"""Queries: every filter form the store sends (each one matching some rows and not others), parameters of each
type, key order, select, pages and their continuation tokens, counts: the same on Azurite and in memory."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from shared.store.tables import Table, int64
from tests.store.contract.backends import Backend

ROWS = [
    # (PartitionKey, RowKey, properties)
    ("sub", "rg|a", {"State": "Enabled", "Sku": "Free", "PrincipalId": "p1", "Status": "Completed"}),
    ("sub", "rg|b", {"State": "Deleted", "Sku": "Free", "PrincipalId": "p2", "Status": "Failed"}),
    ("sub", "rg|c", {"State": "Disabled", "Sku": "Standard", "PrincipalId": "p3", "Status": "Completed"}),
    ("sub", "rh|a", {"State": "Enabled", "Sku": "Free", "Status": "Completed"}),
    ("sub", "rg~7C|x", {"Sku": "P10"}),  # no State: lists skip nothing for a missing one
    ("sua", "rg|a", {"State": "Enabled"}),
    ("suc", "rg|a", {"State": "Enabled"}),
    ("it's", "rg|a", {"State": "Enabled"}),
]

# The store's filters (the module that sends each), their parameters, and the rows they match.
FILTERS = [
    ("PartitionKey eq @pk", {"pk": "sub"}, ["rg|a", "rg|b", "rg|c", "rg~7C|x", "rh|a"]),  # jobs.all and more
    ("PartitionKey eq @pk", {"pk": "it's"}, ["it's rg|a"]),  # a quote in a parameter
    ("PartitionKey ge @lo", {"lo": "sua"}, [f"{p} {r}" for p, r, _ in sorted(ROWS) if p >= "sua"]),  # rewrap_all
    ("PartitionKey lt @pk", {"pk": "sub"}, ["it's rg|a", "sua rg|a"]),  # due.leftovers_before, health
    (
        "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high",  # history, claims, ledger ranges
        {"pk": "sub", "low": "rg|", "high": "rg}"},
        ["rg|a", "rg|b", "rg|c"],
    ),
    (
        "PartitionKey eq @pk and State ne @deleted",  # collections._scope
        {"pk": "sub", "deleted": "Deleted"},
        ["rg|a", "rg|c", "rh|a"],
    ),
    (
        "PartitionKey eq @pk and State ne @deleted and RowKey ge @lo and RowKey lt @hi",  # ... of a resource group
        {"pk": "sub", "deleted": "Deleted", "lo": "rg|", "hi": "rg}"},
        ["rg|a", "rg|c"],
    ),
    (
        "PartitionKey eq @pk and Sku eq @sku and State ne @deleted",  # collections.keys_with_sku
        {"pk": "sub", "sku": "Free", "deleted": "Deleted"},
        ["rg|a", "rh|a"],
    ),
    (
        "PartitionKey eq @pk and ( RowKey eq @n0 or RowKey eq @n1 or RowKey eq @n2 )",  # jobs.get_many
        {"pk": "sub", "n0": "rg|c", "n1": "rh|a", "n2": "rz"},
        ["rg|c", "rh|a"],
    ),
    (
        "PartitionKey eq @pk and ( PrincipalId eq @p0 or PrincipalId eq @p1 )",  # role_assignments.for_principals
        {"pk": "sub", "p0": "p2", "p1": "p3"},
        ["rg|b", "rg|c"],
    ),
    (
        "( PartitionKey eq @pk and State eq @state ) and RowKey gt @__after",  # pages.page_after, jobs._filter
        {"pk": "sub", "state": "Enabled", "__after": "rg|a"},
        ["rh|a"],
    ),
    (
        "PartitionKey eq @pk and RowKey ge @low and RowKey lt @ledger and Status eq @status",  # ledger.attempts_query
        {"pk": "sub", "low": "rg|", "ledger": "rh|", "status": "Completed"},
        ["rg|a", "rg|c"],
    ),
    (
        "not ( PartitionKey eq @pk ) and State eq @state",
        {"pk": "sub", "state": "Enabled"},
        ["it's rg|a", "sua rg|a", "suc rg|a"],
    ),
    ("not ( State eq @state )", {"state": "Enabled"}, ["sub rg|b", "sub rg|c", "sub rg~7C|x"]),  # a missing one too
]


@pytest.fixture
def filled(backend: Backend) -> Table:
    table = backend.table()
    for partition, row, properties in ROWS:
        table.insert({"PartitionKey": partition, "RowKey": row, **properties})
    return table


def _names(found: list[dict[str, object]], partitioned: bool) -> list[str]:
    return [f"{e['PartitionKey']} {e['RowKey']}" if partitioned else str(e["RowKey"]) for e in found]


@pytest.mark.parametrize(("query", "parameters", "expected"), FILTERS)
def test_each_filter_the_store_sends(
    filled: Table, query: str, parameters: dict[str, str], expected: list[str]
) -> None:
    found = list(filled.query(query, parameters))
    assert _names(found, partitioned=" " in expected[0]) == expected
    assert 0 < len(found) < len(ROWS)  # it matched something and left something out


def test_parameters_of_each_type(backend: Backend) -> None:
    table = backend.table()
    at = datetime(2026, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    table.insert({"PartitionKey": "p", "RowKey": "a", "N": 5, "Big": int64(2**40), "Flag": True, "At": at})
    table.insert(
        {"PartitionKey": "p", "RowKey": "b", "N": 6, "Big": int64(2**40 + 1), "Flag": False, "At": at.replace(hour=13)}
    )
    cases = [
        ("N eq @n", {"n": 5}, ["a"]),
        ("N gt @n", {"n": 5}, ["b"]),
        ("Big eq @big", {"big": 2**40 + 1}, ["b"]),
        ("Flag eq @flag", {"flag": True}, ["a"]),
        ("Flag ne @flag", {"flag": True}, ["b"]),
        ("At lt @at", {"at": at.replace(hour=13)}, ["a"]),
        ("At ge @at", {"at": at.replace(hour=13)}, ["b"]),
        ("N eq @n", {"n": "5"}, []),  # a string is not an Int32: no match
    ]
    for query, parameters, expected in cases:
        assert [
            e["RowKey"] for e in table.query(f"PartitionKey eq @pk and {query}", {"pk": "p", **parameters})
        ] == expected, query


def test_timestamp_is_the_time_of_the_last_write(backend: Backend) -> None:
    table = backend.table()
    table.insert({"PartitionKey": "p", "RowKey": "old"})
    backend.advance(0.3)
    cutoff = backend.now()
    backend.advance(0.3)
    table.insert({"PartitionKey": "p", "RowKey": "new"})
    query = (
        "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high and Timestamp lt @cutoff"  # claims.delete_before
    )
    parameters = {"pk": "p", "low": "a", "high": "z", "cutoff": cutoff}
    assert [e["RowKey"] for e in table.query(query, parameters, select=["RowKey"])] == ["old"]
    assert "Timestamp" not in (table.get("p", "old") or {})  # the SDK keeps it out of the entity


def test_rows_come_in_partition_then_row_order_by_code_point(backend: Backend) -> None:
    table = backend.table()
    keys = [("b", "é"), ("b", "|"), ("a", "z"), ("b", "B"), ("B", "a"), ("b", "~"), ("b", "a"), ("b", "a0")]
    for partition, row in keys:
        table.insert({"PartitionKey": partition, "RowKey": row})
    found = [(e["PartitionKey"], e["RowKey"]) for e in table.query("PartitionKey ge @lo", {"lo": ""}, page_size=3)]
    assert found == sorted(keys) and found != keys


def test_select_answers_the_selected_properties_the_entity_has(backend: Backend) -> None:
    table = backend.table()
    table.insert({"PartitionKey": "p", "RowKey": "r", "S": "x", "N": 1})
    (both,) = table.query("PartitionKey eq @pk", {"pk": "p"}, select=["RowKey", "Nope", "S"])
    assert set(both) == {"RowKey", "S", "etag"} and both["S"] == "x"
    (one,) = table.query("PartitionKey eq @pk", {"pk": "p"}, select=["N"])
    assert one == {"N": 1, "etag": (table.get("p", "r") or {})["etag"]}


def test_pages_and_their_continuation_tokens(backend: Backend) -> None:
    table = backend.table()
    for i in range(5):
        table.insert({"PartitionKey": f"p{i % 2}", "RowKey": f"r{i}", "Even": i % 2 == 0})
    query, parameters = "PartitionKey ge @lo", {"lo": ""}
    seen, token, sizes = [], None, []
    while True:
        items, token = table.page(query, parameters, 2, json.loads(json.dumps(token)))  # tokens are plain JSON
        seen += [e["RowKey"] for e in items]
        sizes.append(len(items))
        if token is None:
            break
        assert isinstance(token, dict) and all(isinstance(v, str) for v in token.values())
    assert (seen, sizes) == (["r0", "r2", "r4", "r1", "r3"], [2, 2, 1])
    assert table.page(query, parameters, 5)[1] is None  # a page that takes the last row says there is no next
    filtered = "PartitionKey ge @lo and Even eq @even"
    first, following = table.page(filtered, {"lo": "", "even": True}, 2)
    assert [e["RowKey"] for e in first] == ["r0", "r2"] and following is not None
    rest, end = table.page(filtered, {"lo": "", "even": True}, 2, following)
    assert ([e["RowKey"] for e in rest], end) == (["r4"], None)
    assert table.page("PartitionKey eq @pk", {"pk": "none"}, 2) == ([], None)


def test_a_query_reads_every_page(backend: Backend) -> None:
    table = backend.table()
    table.upsert_batch([{"PartitionKey": "p", "RowKey": f"r{i:04}"} for i in range(100)])
    table.upsert_batch([{"PartitionKey": "q", "RowKey": f"r{i:04}"} for i in range(30)])
    found = [e["RowKey"] for e in table.query("PartitionKey eq @pk", {"pk": "p"}, select=["RowKey"], page_size=7)]
    assert found == [f"r{i:04}" for i in range(100)]


def test_count_stops_at_its_limit(backend: Backend) -> None:
    table = backend.table()
    table.upsert_batch([{"PartitionKey": "p", "RowKey": f"r{i}", "State": "x" if i < 7 else "y"} for i in range(9)])
    table.insert({"PartitionKey": "q", "RowKey": "r0", "State": "x"})
    query = "PartitionKey eq @pk and State eq @state"
    assert table.count(query, {"pk": "p", "state": "x"}, 5) == 5
    assert table.count(query, {"pk": "p", "state": "x"}, 100) == 7
    assert table.count(query, {"pk": "p", "state": "z"}, 100) == 0
