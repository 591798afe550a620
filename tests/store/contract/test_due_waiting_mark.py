"""A due partition's waiting mark (store/due.py `mark_waiting`): one writer of many marks it, the mark is no entry
(reads, range deletes and the backlog pass it by) yet keeps its partition found by a sweep of older buckets, and
once removed it can be set again; the same on Azurite and in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.store.due import DueEntry, DueIndex
from tests.store.contract.backends import Backend

DUE = datetime(2026, 11, 30, 12, 0, 20, tzinfo=UTC)
BUCKET = "202611301200"


def _entries(count: int) -> list[DueEntry]:
    return [DueEntry(JobKey("s", "rg", "c", f"job{i:03}"), DUE + timedelta(seconds=i), 1) for i in range(count)]


def test_the_first_writer_marks_a_partition_and_the_others_find_the_mark(backend: Backend) -> None:
    index = DueIndex(backend.table(), backend.table())
    partition = index.partition(JobKey("s", "rg", "c", "job000"), DUE)
    assert index.read(BUCKET, 0) == ([], False)
    assert [index.mark_waiting(partition) for _ in range(3)] == [True, False, False]
    assert index.read(BUCKET, 0) == ([], True)
    index.unmark_waiting(partition)
    index.unmark_waiting(partition)  # gone already: no error
    assert index.read(BUCKET, 0) == ([], False)
    assert index.mark_waiting(partition)  # a writer after the removal marks it anew


def test_the_mark_is_no_entry_and_outlives_a_range_delete_of_its_partitions_entries(backend: Backend) -> None:
    index = DueIndex(backend.table(), backend.table())
    entries = _entries(5)
    index.add_many((e.job, e.due, e.generation) for e in entries)
    assert index.mark_waiting(index.partition(entries[0].job, DUE))
    found, waiting = index.read(BUCKET, 0)
    assert waiting and sorted(e.job.job for e in found) == [f"job{i:03}" for i in range(5)]
    assert sorted(e.job.job for e in index.entries(BUCKET)) == [f"job{i:03}" for i in range(5)]
    index.remove_entries(entries[1:3])  # a delete of some: a transaction over a range of rows
    index.remove_entries(entries)  # some gone already: the rows still there are read in a range and deleted
    assert index.read(BUCKET, 0) == ([], True)
    # A mark alone still shows its partition to the sweep of older buckets, which removes it (dispatcher.py).
    assert index.leftovers_before("202611301201") == {(BUCKET, 0)}
