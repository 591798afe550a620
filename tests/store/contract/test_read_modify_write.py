"""The one ETag read-modify-write loop (tables.py `read_modify_write`) over each table: a writer that loses a race
to another writer reads again and decides on what it read, up to its attempts, and then gives up with
ConcurrencyError; a record that is gone, or that needs no change, is not written."""

from __future__ import annotations

from typing import Any

import pytest

from shared.store.tables import ConcurrencyError, Entity, Table, read_modify_write
from tests.store.contract.backends import Backend


class Racing:
    """A counter row, and another writer that bumps it right after each of the first `races` reads, so the write
    made under that read's ETag loses."""

    def __init__(self, table: Table, races: int) -> None:
        self.table = table
        self.races = races
        self.reads = 0
        self.seen: list[int] = []  # the counter each decision was made on
        self.pauses: list[int] = []
        table.insert({"PartitionKey": "p", "RowKey": "r", "N": 0})

    def read(self) -> Entity | None:
        self.reads += 1
        found = self.table.get("p", "r")
        if found is not None and self.reads <= self.races:
            self.table.upsert({"PartitionKey": "p", "RowKey": "r", "N": found["N"] + 10})
        return found

    def change(self, entity: Entity) -> Entity:
        self.seen.append(entity["N"])
        return {**entity, "N": entity["N"] + 1}

    def write(self, updated: Entity, current: Entity) -> Entity:
        fields: dict[str, Any] = {k: v for k, v in updated.items() if k != "etag"}
        return {**fields, "etag": self.table.replace(fields, str(current["etag"]))}

    def run(self, attempts: int) -> Entity | None:
        return read_modify_write(self.read, self.change, self.write, attempts=attempts, pause=self.pauses.append)


def test_a_writer_that_lost_a_race_reads_again_and_decides_on_the_fresh_row(backend: Backend) -> None:
    racing = Racing(backend.table(), races=2)
    written = racing.run(attempts=3)
    assert racing.reads == 3 and racing.pauses == [0, 1]
    assert racing.seen == [0, 10, 20]  # each decision on the row as the other writer had left it
    stored = racing.table.get("p", "r")
    assert written is not None and stored is not None and stored["N"] == 21 and stored["etag"] == written["etag"]


def test_a_writer_that_loses_every_race_gives_up_after_its_attempts_without_a_read_more(backend: Backend) -> None:
    racing = Racing(backend.table(), races=100)
    with pytest.raises(ConcurrencyError):
        racing.run(attempts=4)
    assert racing.reads == 4 and racing.pauses == [0, 1, 2]
    assert racing.seen == [0, 10, 20, 30]
    stored = racing.table.get("p", "r")
    assert stored is not None and stored["N"] == 40  # only the other writer's writes landed


def test_a_gone_record_or_one_needing_no_change_is_not_written(backend: Backend) -> None:
    table = backend.table()
    etag = table.insert({"PartitionKey": "p", "RowKey": "r", "N": 1})

    def refuse(_: Entity, __: Entity) -> Entity:
        raise AssertionError("nothing to write")

    kept = read_modify_write(lambda: table.get("p", "r"), lambda _: None, refuse, attempts=3)
    assert kept is not None and kept["etag"] == etag
    gone = read_modify_write(lambda: table.get("p", "missing"), lambda e: e, refuse, attempts=3)
    assert gone is None
