"""An entity-group transaction whose answer was lost is sent once more (store/transaction_repeat.py), on real
Azurite through the fault proxy, which loses the answer of exactly the transaction (it landed) or closes its
connection as it is sent (it did not): claims that landed are this delivery's, replacements that landed are
answered with their rows' ETags, upserts and deletes are done, and a row another writer changed is not counted
ours. A second loss in the same call raises."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from azure.core.exceptions import AzureError

from devhost.azurite import Azurite
from shared.keys import JobKey
from shared.settings import Settings, StorageSettings
from shared.store.claims import Claim, ClaimStore, Wanted, claim_row
from shared.store.storage import AzureStorage
from shared.store.tables import BatchFailed, Entity, Table
from shared.store.transaction_repeat import settled
from shared.timings import Timings
from tests.support.fault_proxy import FaultProxy, StorageFaults

TRANSACTION = rb"POST /\S+/\$batch HTTP/1\.1"


class Tables:
    """One table reached through the proxy (`faulty`) and directly (`clean`)."""

    def __init__(self, azurite: Azurite) -> None:
        self.faults = StorageFaults(azurite.connection_string)
        self.proxy: FaultProxy = self.faults.proxies["TableEndpoint"]
        name = f"lost{uuid.uuid4().hex[:12]}"
        self.clean = AzureStorage(Settings(storage=StorageSettings(connection_string=azurite.connection_string)))
        self.clean_table: Table = self.clean.table(0, name)
        self.clean_table.ensure_exists()
        proxied = Settings(storage=StorageSettings(connection_string=self.faults.connection_string))
        self.faulty: Table = AzureStorage(proxied).table(0, name)

    def rows(self) -> dict[str, Entity]:
        return {e["RowKey"]: e for e in self.clean_table.query("PartitionKey eq @pk", {"pk": "p"})}


@pytest.fixture
def tables(azurite: Azurite) -> Iterator[Tables]:
    made = Tables(azurite)
    yield made
    made.faults.close()


def _entities(count: int, n: int) -> list[Entity]:
    return [{"PartitionKey": "p", "RowKey": f"r{i}", "N": n} for i in range(count)]


def test_claims_whose_transaction_answer_was_lost_are_this_deliverys(tables: Tables) -> None:
    claims = ClaimStore(tables.faulty, Timings())
    now = datetime.now(UTC)
    jobs = [JobKey("sub", "rg", "jc", f"job{i}") for i in range(3)]
    wanted = [Wanted(job, "attempt-1", "delivery-a", now + timedelta(seconds=6)) for job in jobs]
    tables.proxy.drop_answers_to(TRANSACTION)  # the claims land; their answer never comes
    answered = claims.claim_each(wanted, now)
    assert tables.proxy.dropped == 1
    rows = tables.clean_table.query("Runner eq @runner", {"runner": "delivery-a"})
    etags = {row["RowKey"]: row["etag"] for row in rows}
    assert len(etags) == 3
    for job, claim in zip(jobs, answered, strict=True):
        assert isinstance(claim, Claim), claim  # not None ("somebody holds it") nor Expired
        assert not claim.taken_over  # a fresh claim: nothing ran before it
        assert claim.job == job and claim.runner == "delivery-a"
        assert claim.etag == etags[claim_row(job, "attempt-1")]
    # Another delivery of the same attempts finds them held.
    assert ClaimStore(tables.clean_table, Timings()).try_claim(jobs[0], "attempt-1", now, runner="delivery-b") is None


def test_replacements_whose_answer_was_lost_answer_the_rows_written(tables: Tables) -> None:
    tables.clean_table.upsert_batch(_entities(3, 0))
    read = tables.rows()
    tables.proxy.drop_answers_to(TRANSACTION)
    etags = tables.faulty.replace_batch([(e, str(read[e["RowKey"]]["etag"])) for e in _entities(3, 1)])
    assert tables.proxy.dropped == 1
    now = tables.rows()
    assert etags == [now[f"r{i}"]["etag"] for i in range(3)]
    assert {row["N"] for row in now.values()} == {1}


def test_a_replacement_of_a_row_another_writer_changed_is_not_counted_ours(tables: Tables) -> None:
    tables.clean_table.upsert_batch(_entities(3, 0))
    read = tables.rows()
    tables.clean_table.replace({"PartitionKey": "p", "RowKey": "r1", "N": 7}, str(read["r1"]["etag"]))
    tables.proxy.drop_answers_to(TRANSACTION, lands=False)  # the connection closes as the transaction is sent
    etags = tables.faulty.replace_batch([(e, str(read[e["RowKey"]]["etag"])) for e in _entities(3, 1)])
    now = tables.rows()
    assert etags == [now["r0"]["etag"], None, now["r2"]["etag"]]
    assert [now[f"r{i}"]["N"] for i in range(3)] == [1, 7, 1]


def test_upserts_whose_transaction_did_not_land_are_sent_again(tables: Tables) -> None:
    tables.proxy.drop_answers_to(TRANSACTION, lands=False)
    tables.faulty.upsert_batch(_entities(3, 2))
    assert tables.proxy.dropped == 1
    assert {key: row["N"] for key, row in tables.rows().items()} == {"r0": 2, "r1": 2, "r2": 2}


def test_a_transaction_whose_answer_is_lost_twice_raises_after_one_repeat(tables: Tables) -> None:
    tables.proxy.drop_answers_to(TRANSACTION, count=3)
    with pytest.raises(AzureError):
        tables.faulty.upsert_batch(_entities(3, 2))
    assert tables.proxy.dropped == 2  # the first try and its one repeat


def test_deletes_whose_answer_was_lost_are_done(tables: Tables) -> None:
    tables.clean_table.upsert_batch(_entities(3, 0))
    tables.proxy.drop_answers_to(TRANSACTION)  # the rows are deleted; the answer never comes
    tables.faulty.delete_batch("p", ["r0", "r1", "r2"])
    assert tables.proxy.dropped == 1
    assert tables.rows() == {}


def test_deletes_of_a_missing_row_fail_whole_after_a_lost_answer_too(tables: Tables) -> None:
    tables.clean_table.upsert_batch([e for e in _entities(3, 0) if e["RowKey"] != "r1"])
    tables.proxy.drop_answers_to(TRANSACTION, lands=False)
    with pytest.raises(BatchFailed):
        tables.faulty.delete_batch("p", ["r0", "r1", "r2"])
    assert tables.proxy.dropped == 1
    assert sorted(tables.rows()) == ["r0", "r2"]


def test_a_landed_transaction_answers_none_for_a_row_overwritten_since() -> None:
    """The read-back after a refused repeat: a row that holds what was written is ours; one that holds another
    writer's values is not, although the transaction landed (all or nothing: another of its rows shows it)."""
    written = [("update", {"PartitionKey": "p", "RowKey": f"r{i}", "N": 1}, {}) for i in range(2)]
    found = {"r0": {"PartitionKey": "p", "RowKey": "r0", "N": 1, "etag": "e0"}, "r1": {"RowKey": "r1", "N": 9}}
    assert settled(written, found) == ["e0", None]
    assert settled(written, {"r1": found["r1"]}) is None  # no row holds what was written: it did not land
