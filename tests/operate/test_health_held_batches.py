"""Health sees the batches the processes hold waiting (shared/executor/held_report.py, shared/store/held.py): under a
backlog each host holds messages it received and runs a few at a time (executor/late_line.py), invisible in the
queue and older than its front. A process's report of them makes the executor behind, with the count, though the
queue is empty; the report is deleted once nothing waits; a report older than three periods is a process gone:
ignored, and the tick deletes it. Against the session's Azurite, with a real line of late batches."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from shared import api
from shared.executor.held_report import HeldReport
from shared.executor.job_order import Turn
from shared.executor.late_line import LateLine
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.held import HeldReports

PERIOD = 2.0  # held_report_every in these tests: the loop's writes come this often; fresh for 6 s


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, timings=dataclasses.replace(settings.timings, held_report_every=_s(PERIOD)))


def _s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def _executor(rt: Runtime) -> dict[str, object]:
    body = api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt).body
    return {"status": body["status"], "problems": body["problems"], **body["executor"]}


def _batch(due: datetime) -> OccurrenceBatch:
    return OccurrenceBatch((OccurrenceMessage(JobKey("sub-1", "rg-1", "jc1", "held"), due, due),))


def _rows(rt: Runtime) -> list[dict[str, object]]:
    return list(rt.store.due.state.query("PartitionKey eq @p", {"p": "executor-held"}))


def test_batches_a_process_holds_waiting_make_the_executor_behind_until_none_waits(runtime: Runtime) -> None:
    runtime.dispatcher.tick()
    now = datetime.now(UTC).replace(microsecond=0)
    line = LateLine(1)
    report = HeldReport(runtime.store, runtime.clock, runtime.threads, line.held)

    async def run() -> None:
        first = await line.turn(_batch(now - _s(50)), now)  # the one place, taken
        turns = [Turn()]
        first.until_out(turns)
        waiting = [asyncio.ensure_future(line.turn(_batch(now - _s(45 - i)), now)) for i in range(3)]
        await asyncio.sleep(0.05)
        assert line.held() == (now - _s(45), 3)

        await asyncio.to_thread(report.report)
        seen = await asyncio.to_thread(_executor, runtime)
        assert (seen["status"], seen["queuedMessages"], seen["frontDue"]) == ("Degraded", 0, None), seen
        assert datetime.fromisoformat(str(seen["heldDue"])) == now - _s(45) and seen["heldBatches"] == 3
        assert seen["behind"] is True and 45 <= float(str(seen["behindSeconds"])) < 75
        (said,) = seen["problems"]  # type: ignore[misc]
        assert said.endswith("(0 message(s) queued, 3 batch(es) held waiting by the hosts)"), said

        turns[0].went_out()  # each batch goes out in turn, and gives its place to the next
        for batch in waiting:
            (await batch).close()
        assert line.held() == (None, 0)
        await asyncio.to_thread(report.report)  # nothing waits: the row is deleted
        assert await asyncio.to_thread(_rows, runtime) == []
        seen = await asyncio.to_thread(_executor, runtime)
        assert (seen["status"], seen["heldDue"], seen["heldBatches"], seen["behind"]) == ("Healthy", None, 0, False)
        await asyncio.to_thread(report.report)  # said already: no write
        assert await asyncio.to_thread(_rows, runtime) == []

    asyncio.run(run())


def test_the_report_loop_writes_every_period_while_a_batch_waits(runtime: Runtime) -> None:
    """`start` (the executor calls it for each batch) runs the report every `held_report_every`: the row comes and
    goes without anyone calling `report`. Waits four periods past each change, room for a busy machine."""
    now = datetime.now(UTC).replace(microsecond=0)
    line = LateLine(1)
    report = HeldReport(runtime.store, runtime.clock, runtime.threads, line.held)

    async def until(rows: int) -> list[dict[str, object]]:
        for _ in range(int(4 * PERIOD / 0.05) + 40):
            found = await asyncio.to_thread(_rows, runtime)
            if len(found) == rows:
                return found
            await asyncio.sleep(0.05)
        return found

    async def run() -> None:
        report.start()
        report.start()  # once: one loop
        first = await line.turn(_batch(now - _s(40)), now)
        second = asyncio.ensure_future(line.turn(_batch(now - _s(35)), now))
        (row,) = await until(1)
        assert (row["RowKey"], row["Batches"], row["OldestDue"]) == (report.host, 1, now - _s(35))
        first.close()
        (await second).close()
        assert await until(0) == []

    asyncio.run(run())


def test_a_report_older_than_three_periods_is_ignored_and_the_tick_deletes_it(runtime: Runtime) -> None:
    runtime.dispatcher.tick()
    now = datetime.now(UTC).replace(microsecond=0)
    rows = HeldReports(runtime.store.due.state)
    rows.report("gone", now - _s(3 * PERIOD + 5), now - _s(90), 7)  # a process that went away holding batches
    rows.report("alive", now, now - _s(20), 2)
    seen = _executor(runtime)
    assert datetime.fromisoformat(str(seen["heldDue"])) == now - _s(20)
    assert (seen["heldBatches"], seen["behind"], seen["status"]) == (2, False, "Healthy")  # 20 s: not yet behind

    rows.report("alive", datetime.now(UTC), now - _s(20), 2)  # it writes again meanwhile
    runtime.dispatcher.tick()
    assert [row["RowKey"] for row in _rows(runtime)] == ["alive"]
