"""Records are frozen, and a store hands back the record it stored: what storage set (a collection's ETag, a history
row's id) is on the returned record, the caller's record is left as it was. Against Azurite and the memory store
alike (the contract backends), and through the routing over several accounts."""

from __future__ import annotations

import dataclasses
import inspect
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared import records
from shared.keys import CollectionKey, JobKey
from shared.model import (
    JobCollectionDefinition,
    JobExecutionStatus,
    JobHistoryActionName,
    JobProperties,
    LedgerReason,
)
from shared.records import (
    CollectionRecord,
    HistoryRecord,
    JobRecord,
    LedgerEntry,
    OccurrenceRef,
    OverlapMarker,
    RunningOccurrence,
    WaitingOccurrence,
)
from shared.store import CollectionStore, ConcurrencyError, HistoryStore
from shared.store.history import history_id
from shared.store.memory import MemoryStorage
from shared.store.routed import RoutedHistory
from shared.store.routing import account_of
from tests.store.contract.backends import Backend, in_memory, on_azurite
from tests.support.clock import ManualClock

SUB, RG, JC = "sub", "rg", "jc"
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
DEFINITION = JobCollectionDefinition.model_validate({"location": "westus", "properties": {"sku": {"name": "Standard"}}})
PROPERTIES = JobProperties.model_validate(
    {
        "startTime": NOW.isoformat(),
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
    }
)


@pytest.fixture(params=["azurite", "memory"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return on_azurite(request.getfixturevalue("azurite")) if request.param == "azurite" else in_memory()


def _history(job: JobKey, execution_id: str, occurrence: datetime | None = NOW) -> HistoryRecord:
    """An attempt of the main action (with its occurrence: it writes a ledger row too), or a note (None)."""
    return HistoryRecord(
        key=job,
        execution_id=execution_id,
        expected_execution_time=NOW,
        start_time=NOW,
        end_time=NOW + timedelta(seconds=1),
        action_name=JobHistoryActionName.MAIN_ACTION,
        status=JobExecutionStatus.COMPLETED,
        message="OK",
        occurrence=occurrence,
    )


def _examples() -> dict[type, Any]:
    ref = OccurrenceRef("e1", NOW, "schedule", 0)
    job = JobKey(SUB, RG, JC, "j")
    return {
        OccurrenceRef: ref,
        RunningOccurrence: RunningOccurrence(ref, NOW, NOW),
        WaitingOccurrence: WaitingOccurrence(ref, NOW, NOW),
        OverlapMarker: OverlapMarker(),
        CollectionRecord: CollectionRecord(job.collection_key, DEFINITION),
        JobRecord: JobRecord(job, PROPERTIES),
        HistoryRecord: _history(job, "e1"),
        LedgerEntry: LedgerEntry(
            job, "e1", NOW, "schedule", JobExecutionStatus.SKIPPED, "", reason=LedgerReason.JOB_DISABLED
        ),
    }


def test_every_record_is_frozen() -> None:
    declared = {
        cls
        for _, cls in inspect.getmembers(records, inspect.isclass)
        if dataclasses.is_dataclass(cls) and cls.__module__ == records.__name__
    }
    examples = _examples()
    assert declared == set(examples), "a record class without an example here is not checked"
    for cls, record in examples.items():
        name = dataclasses.fields(cls)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, getattr(record, name))


def test_a_collection_written_comes_back_under_its_new_etag_and_the_callers_record_keeps_its_own(
    backend: Backend,
) -> None:
    store = CollectionStore(backend.table())
    key = CollectionKey(SUB, RG, "c1")
    record = CollectionRecord(key, DEFINITION)
    inserted = store.insert(record)
    assert record.etag is None
    assert inserted.etag is not None and inserted == dataclasses.replace(record, etag=inserted.etag)
    changed = dataclasses.replace(inserted, job_count=3)
    written = store.replace(changed)
    assert changed.etag == inserted.etag  # the caller's record still carries the ETag it was read under
    assert written.etag not in (None, inserted.etag) and written.job_count == 3
    stored = store.get(key)
    assert stored is not None and stored.etag == written.etag and stored.job_count == 3
    with pytest.raises(ConcurrencyError):  # that ETag is stale now: the store did not quietly move it on
        store.replace(changed)


def test_history_rows_written_come_back_with_their_ids_and_the_callers_records_keep_none(backend: Backend) -> None:
    store = HistoryStore(backend.table())
    job = JobKey(SUB, RG, JC, "j")
    alone, first, second, note = (_history(job, f"e{n}") for n in range(4))
    note = dataclasses.replace(note, occurrence=None)
    due = NOW - timedelta(seconds=5)
    written = [
        store.add(alone, due),
        *store.add_group([(first, due), (second, due)]),
        *store.add_all([(note, due)], []),
    ]
    callers = [alone, first, second, note]
    assert [r.history_id for r in callers] == [""] * 4
    expected = [history_id(due, r.execution_id, r.action_name.value, r.retry_count) for r in callers]
    assert [r.history_id for r in written] == expected
    assert written == [dataclasses.replace(r, history_id=i) for r, i in zip(callers, expected, strict=True)]
    page, _ = store.page(job, None, 10)
    assert sorted(r.history_id for r in page) == sorted(expected)


def test_routed_notes_come_back_in_the_order_given_whichever_account_holds_them() -> None:
    memory = MemoryStorage(ManualClock(NOW))
    tables = [memory.table(0, "History0"), memory.table(0, "History1")]
    for table in tables:
        table.ensure_exists()
    routed = RoutedHistory([HistoryStore(table) for table in tables])
    names = [f"c{n}" for n in range(12)]
    homes = [account_of(CollectionKey(SUB, RG, name), 2) for name in names]
    assert set(homes) == {0, 1}  # the notes interleave the two accounts
    notes = [(_history(JobKey(SUB, RG, name, "j"), f"e{n}", None), NOW) for n, name in enumerate(names)]
    written = routed.add_all(notes, [])
    assert [r.key for r in written] == [note.key for note, _ in notes]
    assert all(r.history_id == history_id(NOW, r.execution_id, r.action_name.value, 0) for r in written)
    for record, home in zip(written, homes, strict=True):
        page, _ = routed.stores[home].page(record.key, None, 10)
        assert [r.history_id for r in page] == [record.history_id]
