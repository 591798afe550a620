"""Many jobs of one collection read by a query per 14 and written back in entity-group transactions (what a
herd's dispatch and execution do), on real Azurite: the same records as one read or write each, a job changed
meanwhile is left to its own read-modify-write, and a dispatch whose herd raced a rewrite still queues and
advances each job exactly once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey, JobKey
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.store.jobs import MANY_MIN, MANY_PER_QUERY, groups_of
from tests.conftest import ManualClock
from tests.support.scheduler_client import JC, RG, SUB, call, drain_dispatch, make_collection

KEY = CollectionKey(SUB, RG, JC)


def _jobs(rt: Runtime, names: list[str], start: str | None = None) -> list[JobRecord]:
    start = start or (rt.clock.now() + timedelta(days=1)).replace(microsecond=0).isoformat()
    found = []
    for name in names:
        answer = call(
            rt,
            "Jobs_CreateOrUpdate",
            "PUT",
            name,
            {
                "properties": {
                    "startTime": start,
                    "recurrence": {"frequency": "Minute"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
        )
        assert answer.status == 201, answer.body
        record = rt.store.jobs.get(JobKey(SUB, RG, JC, name))
        assert record is not None
        found.append(record)
    return found


def test_a_read_of_many_answers_as_a_read_each(runtime: Runtime) -> None:
    make_collection(runtime, "P20Premium")
    names = [f"j{n:02}" for n in range(MANY_PER_QUERY + 6)]
    _jobs(runtime, names)
    wanted = [JobKey(SUB, RG, JC, name) for name in [*names[1:], "missing"]]  # more than one query's worth
    found = runtime.store.jobs.get_many(KEY, wanted)
    assert found == {key: runtime.store.jobs.get(key) for key in wanted}
    assert found[JobKey(SUB, RG, JC, "missing")] is None


def test_only_collections_with_several_jobs_wanted_are_read_together() -> None:
    many = [JobKey(SUB, RG, "big", f"j{n}") for n in range(MANY_MIN)]
    few = [JobKey(SUB, RG, "small", f"j{n}") for n in range(MANY_MIN - 1)]
    assert groups_of([*few, *many, many[0]]) == [sorted(many, key=lambda k: k.job)]


def test_a_transaction_writes_every_job_but_one_that_changed_meanwhile(runtime: Runtime) -> None:
    make_collection(runtime, "P20Premium")
    read = _jobs(runtime, ["a", "b", "c"])
    changed = call(runtime, "Jobs_Patch", "PATCH", "b", {"properties": {"state": "Disabled"}})
    assert changed.status == 200
    written = runtime.store.jobs.replace_many([replace(job, execution_count=7) for job in read])
    assert written[1] is None  # not written: the PATCH's write stands
    assert runtime.store.jobs.get(read[1].key).state.value == "Disabled"
    for job in (written[0], written[2]):
        assert job is not None and runtime.store.jobs.get(job.key) == job  # its new ETag is the stored one
    assert (
        runtime.store.jobs.replace_many(
            [replace(job, execution_count=8) for job in (written[0], written[2]) if job is not None]
        )[0]
        is not None
    )


def test_a_herd_that_raced_a_rewrite_is_dispatched_once_each(settings, clock: ManualClock) -> None:
    # One shard: the whole herd in one task. The PATCH leaves its occurrence to a dispatch task (first_dispatch.py),
    # visible at once (the memory queue keeps real seconds).
    timings = replace(settings.timings, first_gather=timedelta(0))
    rt = Runtime.create(replace(settings, due_shards=1, timings=timings), clock)
    make_collection(rt, "P20Premium")
    due = clock.now().replace(second=0, microsecond=0) + timedelta(minutes=3)
    names = [f"h{n:02}" for n in range(30)]
    _jobs(rt, names, due.isoformat())
    clock.current = due - timedelta(minutes=1)
    jobs = rt.store.jobs

    class Rewritten(type(jobs)):  # type: ignore[misc]
        """A PATCH of h07 lands between the herd's read and its transaction."""

        def replace_many(self, records: list[JobRecord]) -> list[JobRecord | None]:
            patched = call(
                rt, "Jobs_Patch", "PATCH", "h07", {"properties": {"action": {"request": {"method": "POST"}}}}
            )
            assert patched.status == 200
            return super().replace_many(records)

    racing = Rewritten.__new__(Rewritten)
    racing.__dict__.update(jobs.__dict__)
    report = Dispatcher(replace(rt.store, jobs=racing), clock).tick()
    assert report.enqueued + report.raced == 30 and report.raced == 1 and report.failed == 0
    assert drain_dispatch(rt.dispatcher).enqueued == 1  # the PATCHed job, by its write's task
    for name in names:
        job = jobs.get(JobKey(SUB, RG, JC, name))
        assert job is not None and job.next_execution_time == due + timedelta(minutes=1), name
