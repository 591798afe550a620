"""Many jobs of one collection changed together under their ETags (store/job_updates.py), on real Azurite: the
jobs another write changed since their read are read again together and written in one more transaction
(not a read and a write each), with both changes kept; a job gone meanwhile answers None; a change that
raises is that job's answer alone; a job that keeps changing answers ConcurrencyError after the last round."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from shared.keys import CollectionKey, JobKey
from shared.model import JobState
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store.job_updates import ROUNDS, update_together
from shared.store.jobs import JobStore
from shared.store.tables import ConcurrencyError
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection

KEY = CollectionKey(SUB, RG, JC)


class Counted:
    """The job store, counting the requests of the batched calls (each call is one request per transaction or
    per query of 14)."""

    def __init__(self, jobs: JobStore) -> None:
        self.jobs = jobs
        self.replaced: list[int] = []
        self.read: list[int] = []

    def get_many(self, collection: CollectionKey, keys: list[JobKey]) -> dict[JobKey, JobRecord | None]:
        self.read.append(len(keys))
        return self.jobs.get_many(collection, keys)

    def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
        self.replaced.append(len(records))
        return self.jobs.replace_many(records)


def _jobs(rt: Runtime, count: int) -> list[JobRecord]:
    make_collection(rt, "P20Premium")
    start = (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    for n in range(count):
        answer = call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            f"j{n:02}",
            {
                "properties": {
                    "startTime": start,
                    "recurrence": {"frequency": "Minute"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
        )
        assert answer.status == 201, answer.body
    found = rt.store.jobs.get_many(KEY, [JobKey(SUB, RG, JC, f"j{n:02}") for n in range(count)])
    return [job for job in found.values() if job is not None]


def _counted(job: JobRecord) -> JobRecord:
    return replace(job, execution_count=job.execution_count + 1)


def test_jobs_changed_meanwhile_are_read_again_together_and_both_changes_kept(runtime: Runtime) -> None:
    read = _jobs(runtime, 30)
    for name in ("j03", "j11", "j12", "j29"):  # another writer wins the race for four of them
        assert call(runtime, "Jobs_Patch", "PATCH", name, {"properties": {"state": "Disabled"}}).status == 200
    counted = Counted(runtime.store.jobs)
    answers = update_together(counted, [(job, _counted) for job in read])
    # One write of the 30, one read together of what it could not write (the four, and whatever the first
    # transactions then left unwritten), one write of those.
    assert len(counted.replaced) == 2 and counted.replaced[0] == 30 and len(counted.read) == 1
    assert 4 <= counted.read[0] == counted.replaced[1]
    for job, answer in zip(read, answers, strict=True):
        stored = runtime.store.jobs.get(job.key)
        assert stored is not None and answer == stored  # as written, with its new ETag
        assert stored.execution_count == 1
        disabled = job.key.job in ("j03", "j11", "j12", "j29")
        assert stored.state == (JobState.DISABLED if disabled else JobState.ENABLED)


def test_a_job_gone_meanwhile_answers_none_and_a_refusing_change_only_its_own_error(runtime: Runtime) -> None:
    read = _jobs(runtime, 5)
    assert call(runtime, "Jobs_Delete", "DELETE", "j01").status == 200

    def change(job: JobRecord) -> JobRecord | None:
        if job.key.job == "j02":
            raise ValueError("refused")
        return None if job.key.job == "j03" else _counted(job)

    answers = update_together(runtime.store.jobs, [(job, change) for job in read])
    assert answers[1] is None
    assert isinstance(answers[2], ValueError)
    assert answers[3] == read[3]  # nothing to write: the job as read
    for index in (0, 4):
        stored = runtime.store.jobs.get(read[index].key)
        assert stored is not None and stored.execution_count == 1 and answers[index] == stored
    untouched = runtime.store.jobs.get(read[2].key)
    assert untouched is not None and untouched.execution_count == 0


def test_a_job_that_keeps_changing_answers_a_concurrency_error_after_the_last_round(runtime: Runtime) -> None:
    read = _jobs(runtime, 3)
    jobs = runtime.store.jobs

    def change(job: JobRecord) -> JobRecord | None:
        if job.key.job == "j01":  # another writer lands between every read of j01 and its write
            current = jobs.get(job.key)
            assert current is not None
            jobs.replace(replace(current, failure_count=current.failure_count + 1))
        return _counted(job)

    counted = Counted(jobs)
    answers = update_together(counted, [(job, change) for job in read])
    assert isinstance(answers[1], ConcurrencyError)
    assert len(counted.replaced) == ROUNDS
    stored = jobs.get(read[1].key)
    assert stored is not None and stored.execution_count == 0 and stored.failure_count == ROUNDS
    for index in (0, 2):
        other = jobs.get(read[index].key)
        assert other is not None and other.execution_count == 1
