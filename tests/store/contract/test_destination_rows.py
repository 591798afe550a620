"""The rows of destinations that push back or fail (store/destinations.py `DestinationRows`), on Azurite and in
memory: a state reads back exactly as written (every field, instants to the microsecond, a rate as the float it
was), a row is inserted once and then replaced under its ETag (a stale ETag is refused), `all` lists every row of
its partition by destination, and a property that cannot be read reads as absent until the next write mends it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.jobstate.pushback import DestinationState
from shared.store.destinations import DestinationRow, DestinationRows
from shared.store.tables import ConcurrencyError, int64
from tests.store.contract.backends import Backend

T = datetime(2026, 3, 4, 10, 0, 0, 123457, tzinfo=UTC)
US = timedelta(microseconds=1)

FULL = DestinationState(
    rate=1 / 3,  # no short decimal: it reads back only if stored as the double it is
    next_free=T + timedelta(seconds=2, microseconds=1),
    hold_until=T + timedelta(seconds=2),
    pushed_at=T,
    episode_at=T - US,
    widened_at=T - timedelta(seconds=30, microseconds=999_999),
    last_status=503,
    failures=7,
    failing_since=datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),  # before the epoch
    failed_at=T + US,
    open_until=datetime(2999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),  # past Int32's microseconds
    probe="s|g|c|j|2026-03-04T10:00:00Z|MainAction|0",
)


def rows(backend: Backend) -> DestinationRows:
    return DestinationRows(backend.table())


@pytest.mark.parametrize(
    "state",
    [
        FULL,
        DestinationState(rate=45.0, next_free=T, hold_until=T, pushed_at=T, episode_at=T, last_status=429),
        DestinationState(rate=0.2),
        DestinationState(failures=1, failing_since=T, failed_at=T),
        DestinationState(),  # clear: a row whose trouble is over stays
    ],
    ids=["every-field", "a-budget", "a-floor-rate", "a-failure", "clear"],
)
def test_a_state_reads_back_exactly_as_written(backend: Backend, state: DestinationState) -> None:
    store = rows(backend)
    written = store.write("api.example.com:8443", DestinationRow(state))
    read = store.read("api.example.com:8443")
    assert read.state == state and read.etag == written.etag and read.etag is not None
    if state.rate is not None:
        assert read.state.rate is not None and read.state.rate.hex() == state.rate.hex()  # bit for bit


def test_a_missing_row_reads_clear_without_an_etag(backend: Backend) -> None:
    assert rows(backend).read("nowhere.example") == DestinationRow(DestinationState(), None)


def test_a_row_is_inserted_once_and_then_replaced_under_its_etag(backend: Backend) -> None:
    store = rows(backend)
    first = store.write("queue:account", DestinationRow(DestinationState(failures=1, failed_at=T)))
    assert first.etag is not None
    with pytest.raises(ConcurrencyError):  # an insert where another writer's row is
        store.write("queue:account", DestinationRow(DestinationState(failures=1, failed_at=T + US)))
    later = DestinationState(failures=2, failing_since=T, failed_at=T + US, open_until=T + timedelta(seconds=5))
    second = store.write("queue:account", DestinationRow(later, first.etag))
    assert second.etag not in (None, first.etag)
    assert store.read("queue:account") == DestinationRow(later, second.etag)
    # Fields the new state no longer has are gone, not left from the row before.
    cleared = store.write("queue:account", DestinationRow(DestinationState(), second.etag))
    assert store.read("queue:account") == DestinationRow(DestinationState(), cleared.etag)


def test_a_write_under_a_stale_etag_is_refused_and_changes_nothing(backend: Backend) -> None:
    store = rows(backend)
    first = store.write("servicebus:ns", DestinationRow(DestinationState(rate=10.0)))
    second = store.write("servicebus:ns", DestinationRow(DestinationState(rate=5.0), first.etag))
    with pytest.raises(ConcurrencyError):
        store.write("servicebus:ns", DestinationRow(DestinationState(rate=20.0), first.etag))
    assert store.read("servicebus:ns") == second


def test_all_lists_every_destination_of_the_partition_by_name(backend: Backend) -> None:
    store = rows(backend)
    names = ["servicebus:ns", "api.example.com", "queue:account", "127.0.0.1:8080", "::1", "API.other.example"]
    for i, name in enumerate(names):
        store.write(name, DestinationRow(DestinationState(failures=i + 1, failed_at=T)))
    store.table.insert({"PartitionKey": "host", "RowKey": "api.example.com", "NextFree": int64(1)})  # a pacer
    listed = store.all()
    assert [name for name, _ in listed] == sorted(names)
    assert {name: state.failures for name, state in listed} == {name: i + 1 for i, name in enumerate(names)}


def test_all_lists_nothing_for_no_rows(backend: Backend) -> None:
    assert rows(backend).all() == []


def test_an_unreadable_property_reads_as_absent_and_the_next_write_mends_it(backend: Backend) -> None:
    store = rows(backend)
    etag = store.table.insert(
        {
            "PartitionKey": "destination",
            "RowKey": "broken.example",
            "Destination": "broken.example",
            "Rate": "fast",
            "NextFree": "soon",
            "HoldUntil": int64((T - datetime(1970, 1, 1, tzinfo=UTC)) // US),  # readable: kept
            "LastStatus": "429",
            "Failures": "many",
            "Probe": "",
        }
    )
    read = store.read("broken.example")
    assert read.etag == etag and read.state == DestinationState(hold_until=T)
    mended = store.write("broken.example", DestinationRow(read.state, read.etag))
    raw = store.table.get("destination", "broken.example")
    assert raw is not None and not {"Rate", "NextFree", "LastStatus"} & raw.keys() and raw["Failures"] == 0
    assert store.read("broken.example") == mended
    assert store.all() == [("broken.example", read.state)]


def test_an_empty_instant_reads_as_absent(backend: Backend) -> None:
    store = rows(backend)
    store.table.insert({"PartitionKey": "destination", "RowKey": "empty.example", "OpenUntil": ""})
    assert store.read("empty.example").state.open_until is None
