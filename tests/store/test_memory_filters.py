"""The memory store's filters refuse, loudly and at once, what lies outside the subset it evaluates (the service
would answer; an answer guessed here could pass a test that Table Storage fails). What it does evaluate is the
contract suite's (tests/store/contract/test_queries.py), against Azurite too."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.store.memory import MemoryTable
from shared.store.memory.odata import UnsupportedFilter
from tests.support.clock import ManualClock


@pytest.fixture
def table() -> MemoryTable:
    made = MemoryTable("filters", ManualClock(datetime(2026, 3, 1, tzinfo=UTC)))
    made.ensure_exists()
    made.insert({"PartitionKey": "p", "RowKey": "r", "N": 1, "Ratio": 0.5})
    return made


@pytest.mark.parametrize(
    "query",
    [
        "Ratio gt 0.25",  # a Double literal
        "RowKey eq guid'00000000-0000-0000-0000-000000000005'",
        "RowKey eq X'00'",
        "RowKey eq null",
        "startswith(RowKey, 'r')",
        "RowKey EQ 'r'",  # operators are lower case
        "RowKey eq 'r' AND N eq 1",
        "not RowKey eq 'r'",  # OData and Azurite read it differently: parenthesize
        "RowKey eq @row",  # a parameter never substituted
        "(RowKey eq 'r'",
        "RowKey eq 'r')",
        "RowKey eq",
        "",
    ],
)
def test_a_filter_outside_the_subset_is_refused(table: MemoryTable, query: str) -> None:
    with pytest.raises(UnsupportedFilter):
        list(table.query(query))
    with pytest.raises(UnsupportedFilter):
        table.page(query, {}, 10)


def test_a_parameter_of_another_type_is_refused(table: MemoryTable) -> None:
    with pytest.raises(UnsupportedFilter):
        list(table.query("Ratio gt @ratio", {"ratio": 0.25}))
    assert [e["RowKey"] for e in table.query("N eq @n", {"n": 1})] == ["r"]  # the same shape, supported
