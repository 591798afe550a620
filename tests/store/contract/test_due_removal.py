"""Removing due entries (store/due.py `remove_entries`) when another remover took some of them already (a dispatch
task run twice after its watchdog): the rest are removed, in a transaction of those still there, not a delete each;
the same on Azurite and in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

from shared.keys import JobKey
from shared.store.due import DueEntry, DueIndex
from shared.store.tables import Table
from tests.store.contract.backends import Backend
from tests.store.contract.counted import CountedTable

DUE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _entries(count: int) -> list[DueEntry]:
    return [DueEntry(JobKey("s", "rg", "c", f"job{i:03}"), DUE + timedelta(seconds=i % 7), 1) for i in range(count)]


def _left(index: DueIndex) -> list[str]:
    return sorted(e.job.job for e in index.entries("202611301200"))


def test_entries_some_of_which_are_gone_are_removed_in_a_transaction_not_one_by_one(backend: Backend) -> None:
    table = CountedTable(backend.table())
    index = DueIndex(cast(Table, table), backend.table())
    entries = _entries(60)
    index.add_many((e.job, e.due, e.generation) for e in entries)
    assert len(_left(index)) == 60
    index.remove_entries(entries[::3])  # another remover's share: 20 of them
    table.calls.clear()
    index.remove_entries(entries)
    calls = dict(table.calls)
    assert _left(index) == []
    # The first transaction is refused (a row is gone), the rows still there are read and deleted in a second.
    assert calls == {"delete_batch": 2, "query": 1}, calls  # a delete each before: 1 + 40


def test_entries_all_gone_cost_a_transaction_and_a_read(backend: Backend) -> None:
    table = CountedTable(backend.table())
    index = DueIndex(cast(Table, table), backend.table())
    entries = _entries(10)
    index.add_many((e.job, e.due, e.generation) for e in entries)
    index.remove_entries(entries)
    table.calls.clear()
    index.remove_entries(entries)  # the second run of a task finds none of them
    calls = dict(table.calls)
    assert _left(index) == []
    assert calls == {"delete_batch": 1, "query": 1}, calls  # a delete each before: 1 + 10
