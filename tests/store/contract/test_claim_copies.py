"""Claiming a batch whose claims exist already (store/claims.py `claim_each`): a copy of a batch (its watchdog or
backstop delivered while its holder runs it, or the host's redelivery) reads the refused claims together, inserts
the missing ones in a second transaction and settles each found one as `try_claim` does; not an insert and a read
per claim. The same on Azurite and in memory."""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from shared.keys import JobKey
from shared.store.claims import Claim, ClaimStore, Expired, Wanted
from shared.store.tables import ROWS_PER_QUERY, Table
from shared.timings import Timings
from tests.store.contract.backends import Backend
from tests.store.contract.counted import CountedTable

JOBS = [JobKey("s", "rg", "c", f"job{i:03}") for i in range(50)]


def _wanted(jobs: list[JobKey], runner: str, lease: timedelta, backend: Backend) -> list[Wanted]:
    return [Wanted(job, f"{job.job}|MainAction|0", runner, backend.now() + lease) for job in jobs]


def test_a_copy_of_a_batch_settles_its_claims_with_reads_of_fourteen_not_one_each(backend: Backend) -> None:
    table = CountedTable(backend.table())
    claims = ClaimStore(cast(Table, table), Timings())
    held = claims.claim_each(_wanted(JOBS[:30], "holder", timedelta(minutes=1), backend), backend.now())
    assert all(isinstance(claim, Claim) for claim in held)
    claims.complete(cast(Claim, held[0]))  # its attempt ended
    claims.claim_each(_wanted(JOBS[30:35], "copy", timedelta(minutes=1), backend), backend.now())  # ours: resumed
    claims.claim_each(_wanted(JOBS[35:38], "gone", timedelta(seconds=-1), backend), backend.now())  # lapsed
    table.calls.clear()

    found = claims.claim_each(_wanted(JOBS, "copy", timedelta(minutes=1), backend), backend.now())

    assert found[:30] == [None] * 30  # one done, 29 held by a live runner
    resumed = found[30:35]
    assert all(isinstance(c, Claim) and c.taken_over and c.runner == "copy" for c in resumed), resumed
    assert all(isinstance(c, Expired) and c.runner == "copy" for c in found[35:38]), found[35:38]
    fresh = found[38:]
    assert len(fresh) == 12 and all(isinstance(c, Claim) and not c.taken_over for c in fresh), fresh
    # The first transaction is refused twice; the 50 rows are read 14 a query; the 12 missing inserted in one more;
    # the 5 of this runner taken back one by one (each under its own ETag). Before: 1 transaction + an insert and a
    # read for each of the 38 there (and for the 12 missing, an insert each).
    reads = -(-len(JOBS) // ROWS_PER_QUERY)
    assert dict(table.calls) == {"insert_batch": 2, "query": reads, "replace": 5}, dict(table.calls)
    # What was inserted or taken back is held: a second copy finds every one of them there.
    again = claims.claim_each(_wanted(JOBS, "another", timedelta(minutes=1), backend), backend.now())
    assert again[:35] == [None] * 35 and again[38:] == [None] * 12


def test_a_batch_with_one_duplicate_reads_that_one_claim(backend: Backend) -> None:
    table = CountedTable(backend.table())
    claims = ClaimStore(cast(Table, table), Timings())
    claims.claim_each(_wanted(JOBS[:1], "other", timedelta(minutes=1), backend), backend.now())
    table.calls.clear()
    found = claims.claim_each(_wanted(JOBS[:20], "first", timedelta(minutes=1), backend), backend.now())
    assert found[0] is None and all(isinstance(c, Claim) for c in found[1:]), found
    assert dict(table.calls) == {"insert_batch": 1, "query": 1}, dict(table.calls)  # the second try took the rest


def test_a_fresh_batch_costs_one_transaction(backend: Backend) -> None:
    table = CountedTable(backend.table())
    claims = ClaimStore(cast(Table, table), Timings())
    found = claims.claim_each(_wanted(JOBS, "first", timedelta(minutes=1), backend), backend.now())
    assert all(isinstance(c, Claim) for c in found)
    assert dict(table.calls) == {"insert_batch": 1}, dict(table.calls)
