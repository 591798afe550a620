"""A dispatch task that fails on a storage fault keeps its watchdog: the host delivers the task again, but under a
lossy spell that redelivery may be lost for the receive's ten minutes; the watchdog brings the task back
`task_watchdog_after` later instead (issue 37, item 2). A task that ends deletes its watchdog. On the memory store
and a ManualClock."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
from azure.core.exceptions import ServiceRequestError

from shared.manual_clock import ManualClock
from shared.runtime import Runtime
from shared.store.queues import ShardTask
from tests.support.manual_time import START, runtime_in_memory


def _visible(rt: Runtime) -> list[str]:
    return [m.content for m in rt.store.dispatch.client.receive_messages(visibility_timeout=600, max_messages=32)]


@pytest.mark.parametrize("fails", [True, False], ids=["fails", "ends"])
def test_a_failed_task_leaves_its_watchdog_and_an_ended_one_deletes_it(fails: bool) -> None:
    clock = ManualClock(START)
    with runtime_in_memory(clock) as rt:
        task = ShardTask("202603011201", 0)
        failing = pytest.raises(ServiceRequestError) if fails else nullcontext()
        with failing, rt.dispatcher.watchdogs.watching(task):
            if fails:
                raise ServiceRequestError("Connection reset by peer")
        assert _visible(rt) == []  # hidden while its holder could still renew it
        clock.advance(rt.store.timings.task_watchdog_after.total_seconds() + 1)
        found = _visible(rt)
        assert len(found) == (1 if fails else 0), found
        if fails:
            assert ShardTask.from_json(found[0]).bucket == task.bucket
