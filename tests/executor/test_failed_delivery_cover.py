"""A delivery that fails on a storage fault keeps its batch's copies: the host delivers the batch again after its
visibilityTimeout, but under a lossy spell its update of the message's visibility (or the redelivery's receive)
may be lost, and the message then stays hidden for the receive's ten minutes. The watchdog runs the batch instead,
seconds after its second (issue 37, item 2), and the first delivery's message, when it turns up, is a duplicate.

On the memory store and a ManualClock (tests/support/manual_time.py). The storage fault is a claim store whose
first transaction fails as a connection reset would (the store's interface, not our code, is stood in for)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from azure.core.exceptions import ServiceRequestError

from shared.executor import Executor
from shared.model import JobExecutionStatus
from shared.runtime import Runtime
from shared.store import Claim, ClaimStore, Expired
from shared.store.claims import Wanted
from tests.executor.peers.servers import Server
from tests.executor.support import history, http, job_status, make_collection, put_job
from tests.executor.test_lost_receive import handle, next_visible, rt  # noqa: F401 (the memory deployment)
from tests.support.manual_time import in_its_time


class _ResetOnce(ClaimStore):
    """The claims, whose first transaction meets a reset connection."""

    def __init__(self, inner: ClaimStore) -> None:
        self.__dict__.update(inner.__dict__)
        self.failed = False

    def claim_each(self, wanted: Sequence[Wanted], now: datetime) -> list[Claim | Expired | None]:
        if not self.failed:
            self.failed = True
            raise ServiceRequestError("Connection reset by peer")
        return super().claim_each(wanted, now)


def test_a_failed_delivery_whose_redelivery_is_lost_runs_from_its_watchdog(rt: Runtime, target: Server) -> None:  # noqa: F811
    make_collection(rt)
    start = rt.clock.now().replace(microsecond=0) + timedelta(seconds=4)
    put_job(rt, "covered", {"startTime": start.isoformat(), "action": http(target.url)})
    [message] = list(rt.store.queue.client.receive_messages(visibility_timeout=600))  # as the host receives
    claims = _ResetOnce(rt.store.claims)
    failing = Executor(replace(rt.store, claims=claims), rt.clock, rt.executor.attempts.actions, rt.settings)
    with pytest.raises(ServiceRequestError):
        in_its_time(rt.clock, lambda: failing.handle(message.content, message.id, 1))
    assert claims.failed and target.hits == []
    # The host's update of the message's visibility (to its visibilityTimeout) is lost: it stays hidden 600 s.

    watchdog, waited = next_visible(rt, within=60)
    assert waited < 20, waited  # the watchdog's 7 s past the second, not the receive's 600 s
    handle(rt, watchdog)
    rt.store.queue.client.delete_message(watchdog)
    assert len(target.hits) == 1
    assert [entry.status for entry in history(rt, "covered")] == [JobExecutionStatus.COMPLETED]

    handle(rt, message, 2)  # ten minutes later the first delivery's message turns up: a duplicate
    assert len(target.hits) == 1 and job_status(rt, "covered").execution_count == 1
