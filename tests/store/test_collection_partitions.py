"""Claims and history rows live in their collection's partition, keyed `<job>|...`, on real Azurite: a batch's
claims are taken and renewed in one transaction, and what exists already (a duplicate, a resumed claim, a
lost one) is settled by itself; a job's history is its own rows only (not those of a job whose name it
prefixes), the API's ids carry no prefix, and rows of the layout before (a partition per job) are moved in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.keys import JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.records import HistoryRecord
from shared.runtime import Runtime
from shared.store import Claim, Expired
from shared.store.claims import Wanted, claim_groups, claim_partition, claim_row, renewal_groups
from shared.store.history import history_groups, history_id
from shared.store.keys import job_partition, job_scope
from shared.store.tables import as_datetime

SUB, RG, JC = "sub", "rg", "jc"
NOW = datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC)


def _job(name: str, collection: str = JC) -> JobKey:
    return JobKey(SUB, RG, collection, name)


def _claim(
    runtime: Runtime, group: list[tuple[JobKey, str]], now: datetime, runner: str, lease: datetime
) -> list[Claim | Expired | None]:
    """One runner's claims of one collection, with one lease, as a batch takes them."""
    return runtime.store.claims.claim_each([Wanted(job, claim_id, runner, lease) for job, claim_id in group], now)


def test_a_batch_of_claims_is_one_group_per_collection_and_taken_at_once(runtime: Runtime) -> None:
    wanted = [(_job(f"j{n}"), f"e{n}|MainAction|0") for n in range(5)] + [(_job("j0", "other"), "x|MainAction|0")]
    groups = claim_groups(wanted)
    assert sorted(len(g) for g in groups) == [1, 5]
    lease = NOW + timedelta(seconds=6)
    taken = [c for g in groups for c in _claim(runtime, g, NOW, "delivery-a", lease)]
    assert all(isinstance(c, Claim) and not c.taken_over for c in taken)
    # A second delivery finds them all live (duplicates); the same delivery resumes them.
    assert _claim(runtime, groups[0], NOW, "delivery-b", lease) == [None] * len(groups[0])
    resumed = _claim(runtime, groups[0], NOW, "delivery-a", lease)
    assert all(isinstance(c, Claim) and c.taken_over for c in resumed)
    # After the lease, another runner sees them expired, not free.
    late = _claim(runtime, groups[0], lease + timedelta(seconds=1), "delivery-c", lease + timedelta(seconds=7))
    assert all(isinstance(c, Expired) for c in late)


def test_a_group_with_one_claim_taken_elsewhere_claims_the_others(runtime: Runtime) -> None:
    claims = runtime.store.claims
    group = [(_job(f"k{n}"), f"f{n}|MainAction|0") for n in range(4)]
    lease = NOW + timedelta(seconds=6)
    assert isinstance(claims.try_claim(*group[2], NOW, "elsewhere", lease), Claim)
    taken = _claim(runtime, group, NOW, "here", lease)
    assert [type(c).__name__ for c in taken] == ["Claim", "Claim", "NoneType", "Claim"]


def test_copies_of_a_claim_in_one_group_are_duplicates_of_the_first(runtime: Runtime) -> None:
    claims = runtime.store.claims
    lease = NOW + timedelta(seconds=6)
    one, two = (_job("c1"), "h1|MainAction|0"), (_job("c2"), "h2|MainAction|0")
    wanted = [Wanted(*one, "delivery-a", lease), Wanted(*two, "delivery-a", lease), Wanted(*one, "delivery-b", lease)]
    taken = claims.claim_each(wanted, NOW)
    assert [type(c).__name__ for c in taken] == ["Claim", "Claim", "NoneType"]
    # Existing already, both copies are settled by themselves: the holder resumes, the other is a duplicate.
    again = claims.claim_each([Wanted(*one, "delivery-b", lease), Wanted(*one, "delivery-a", lease)], NOW)
    assert again[0] is None and isinstance(again[1], Claim) and again[1].taken_over


def test_a_renewal_of_a_group_keeps_what_is_ours_and_reports_what_was_taken(runtime: Runtime) -> None:
    claims = runtime.store.claims
    group = [(_job(f"r{n}"), f"g{n}|MainAction|0") for n in range(3)]
    lease = NOW + timedelta(seconds=6)
    held = [c for c in _claim(runtime, group, NOW, "runner-a", lease) if isinstance(c, Claim)]
    assert len(held) == 3
    # Another worker takes the second over once its lease lapsed.
    lapsed = claims.try_claim(*group[1], lease + timedelta(seconds=1), "runner-b", lease + timedelta(seconds=9))
    assert isinstance(lapsed, Expired)
    assert claims.take_over(lapsed, lease + timedelta(seconds=9)) is not None
    assert claims.renew_group(held, lease + timedelta(seconds=4)) == [True, False, True]
    assert claims.renew_group([held[0], held[2]], lease + timedelta(seconds=6)) == [True, True]


def _attempt(job: JobKey, n: int, status: JobExecutionStatus = JobExecutionStatus.COMPLETED) -> HistoryRecord:
    due = NOW + timedelta(minutes=n)
    return HistoryRecord(
        key=job,
        execution_id=f"{job.job}-{n}",
        expected_execution_time=due,
        start_time=due,
        end_time=due + timedelta(seconds=1),
        action_name=JobHistoryActionName.MAIN_ACTION,
        status=status,
        message=f"attempt {n}",
        retry_count=0,
        repeat_count=n,
        occurrence=due,
        trigger="schedule",
    )


def test_attempts_of_a_collection_are_written_together_and_read_per_job(runtime: Runtime) -> None:
    history = runtime.store.history
    a, ab = _job("a"), _job("ab")  # "a|" and "ab|": one job's rows are never the other's
    records = [(_attempt(job, n), NOW + timedelta(minutes=n)) for job in (a, ab) for n in range(3)]
    groups = history_groups(records)
    assert [len(g) for g in groups] == [6]
    history.add_group(groups[0])
    for job in (a, ab):
        page, _ = history.page(job, None, 10)
        assert [r.message for r in page] == ["attempt 2", "attempt 1", "attempt 0"]  # newest first
        assert all(r.key == job and "|" not in r.history_id for r in page)
        ledger, _ = history.ledger_page(job, None, None, None, 10)
        assert [e.occurrence for e in ledger] == [NOW + timedelta(minutes=n) for n in (2, 1, 0)]
        assert all("|" not in e.entry_id for e in ledger)
    assert history.keep_newest(a, 1) == 2
    assert [r.message for r in history.page(a, None, 10)[0]] == ["attempt 2"]
    assert len(history.page(ab, None, 10)[0]) == 3


def test_history_of_the_layout_before_is_moved_into_the_collection_partition(runtime: Runtime) -> None:
    history = runtime.store.history
    job = _job("old")
    record = _attempt(job, 0, JobExecutionStatus.FAILED)
    old_id = history_id(NOW, record.execution_id, record.action_name.value, 0)
    history.table.upsert(
        {
            "PartitionKey": job_scope(job),
            "RowKey": old_id,
            "ExecutionId": record.execution_id,
            "ExpectedExecutionTime": NOW,
            "StartTime": NOW,
            "EndTime": NOW,
            "ActionName": "MainAction",
            "Status": "Failed",
            "Message": "from before",
            "RetryCount": 0,
            "RepeatCount": 0,
        }
    )
    assert history.page(job, None, 10)[0] == []
    assert history.adopt_legacy(job) == 1
    page, _ = history.page(job, None, 10)
    assert [(r.history_id, r.message, r.status) for r in page] == [(old_id, "from before", JobExecutionStatus.FAILED)]
    assert list(history.table.query("PartitionKey eq @pk", {"pk": job_scope(job)})) == []
    assert history.adopt_legacy(job) == 0
    assert {e["PartitionKey"] for e in history.table.query("RowKey ge @r", {"r": ""})} == {
        job_partition(job.collection_key)
    }


def test_claims_of_several_batches_renew_a_collection_at_a_time_each_to_its_own_lease(runtime: Runtime) -> None:
    claims = runtime.store.claims
    lease = NOW + timedelta(seconds=6)
    mine = [(_job(f"s{n}"), f"s{n}|MainAction|0") for n in range(3)]
    theirs = [(_job("s0", "other"), "t0|MainAction|0"), (_job("s9"), "s9|MainAction|0")]
    held = [c for c in _claim(runtime, mine, NOW, "batch-a", lease) if isinstance(c, Claim)]
    held += [c for g in claim_groups(theirs) for c in _claim(runtime, g, NOW, "batch-b", lease) if isinstance(c, Claim)]
    # batch-b takes one of batch-a's over (its lease lapsed): both batches now hold that row, one of them in vain.
    lapsed = claims.try_claim(*mine[1], lease + timedelta(seconds=1), "batch-b", lease + timedelta(seconds=9))
    assert isinstance(lapsed, Expired)
    taken = claims.take_over(lapsed, lease + timedelta(seconds=9))
    assert isinstance(taken, Claim)
    held.append(taken)
    groups = renewal_groups(held)
    # One transaction for the collection's claims of both batches, the row held twice in a second one, the other
    # collection's apart.
    assert sorted(sorted(held[i].claim_id for i in g) for g in groups) == [
        ["s0|MainAction|0", "s1|MainAction|0", "s2|MainAction|0", "s9|MainAction|0"],
        ["s1|MainAction|0"],
        ["t0|MainAction|0"],
    ]
    untils = [lease + timedelta(seconds=10 + i) for i in range(len(held))]
    kept: dict[int, bool] = {}
    for g in groups:
        kept.update(zip(g, claims.renew_group([held[i] for i in g], [untils[i] for i in g]), strict=True))
    assert [kept[i] for i in range(len(held))] == [True, False, True, True, True, True]
    for i in (0, 2, 3, 4, 5):
        row = claims.table.get(claim_partition(held[i].job), claim_row(held[i].job, held[i].claim_id))
        assert row is not None and as_datetime(row["LeaseUntil"]) == untils[i]
