"""Health sees the executor's backlog (shared/health.py `executor_backlog`): occurrences queued and not yet run, as
the occurrence queue of a deployment of its own in the session's Azurite holds them (no host runs them here).
A front waiting message later than `executor_behind_after` makes health say the executor is behind, with the
count, and the status Degraded (200, not 503: occurrences still run); an empty queue says nothing; a message a
worker holds (received, so invisible) or one not yet due is not behind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared import api
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.runtime import Runtime

JOB = JobKey("sub-1", "rg-1", "jc1", "late")


def _health(rt: Runtime) -> api.ApiResponse:
    return api.handle("Health_Get", api.ApiRequest("GET", "http://127.0.0.1/api/health", {}, {}), rt)


def _queue(rt: Runtime, due: datetime) -> None:
    """An occurrence queued as the dispatcher queues it: the batch (visible at once when due has passed), and its
    watchdog and backstop copies, hidden."""
    rt.store.queue.send(OccurrenceMessage(JOB, due, due), datetime.now(UTC))


def test_an_empty_queue_says_nothing(runtime: Runtime) -> None:
    runtime.dispatcher.tick()
    response = _health(runtime)
    assert (response.status, response.body["status"], response.body["problems"]) == (200, "Healthy", [])
    assert response.body["executor"] == {
        "queuedMessages": 0,
        "frontDue": None,
        "heldDue": None,
        "heldBatches": 0,
        "behindSeconds": None,
        "behind": False,
        "behindAfterSeconds": 30.0,
    }


def test_occurrences_waiting_40_s_past_their_due_make_the_executor_behind(runtime: Runtime) -> None:
    runtime.dispatcher.tick()
    due = (datetime.now(UTC) - timedelta(seconds=40)).replace(microsecond=0)
    _queue(runtime, due)
    _queue(runtime, due + timedelta(seconds=20))
    response = _health(runtime)
    assert response.status == 200 and response.body["status"] == "Degraded", response.body
    executor = response.body["executor"]
    assert executor["queuedMessages"] == 6  # two batches, each with its watchdog and backstop
    assert datetime.fromisoformat(executor["frontDue"]) == due
    assert 40 <= executor["behindSeconds"] < 60 and executor["behind"] is True
    (said,) = response.body["problems"]
    assert said.startswith("the executor is behind by 4") and said.endswith(" s (6 message(s) queued)")
    assert response.body["dispatcher"]["behind"] is False  # the dispatcher keeps up: it is the executor

    # The next tick sees it too (its heartbeat row and what it hands telemetry).
    observation = runtime.dispatcher.tick().observation
    assert observation is not None and observation.executor is not None
    assert (observation.executor.queued, observation.executor.front_due) == (6, due)


def test_a_message_a_worker_holds_or_not_yet_due_is_not_behind(runtime: Runtime) -> None:
    runtime.dispatcher.tick()
    due = datetime.now(UTC) - timedelta(seconds=40)
    # Without its copies: a watchdog turns visible 7 s after its send, and a worker would take it over.
    runtime.store.queue.client.send_message(OccurrenceBatch((OccurrenceMessage(JOB, due, due),)).to_json())
    # A worker took it: invisible for as long as it runs (the host's receive hides it for minutes).
    (held,) = runtime.store.queue.client.receive_messages(visibility_timeout=120)
    response = _health(runtime)
    assert response.body["status"] == "Healthy" and response.body["problems"] == [], response.body
    assert response.body["executor"]["queuedMessages"] == 1 and response.body["executor"]["behind"] is False
    assert response.body["executor"]["behindSeconds"] is None  # nothing visible waits

    # Visible up to early_visibility before its second: waiting, not late.
    _queue(runtime, datetime.now(UTC) + timedelta(seconds=3))
    executor = _health(runtime).body["executor"]
    assert (executor["behindSeconds"], executor["behind"], executor["queuedMessages"]) == (0.0, False, 4)
    runtime.store.queue.client.delete_message(held.id, held.pop_receipt)


def test_a_front_message_not_ours_tells_no_due(runtime: Runtime) -> None:
    runtime.store.queue.client.send_message("not an occurrence", time_to_live=-1)
    executor = _health(runtime).body["executor"]
    assert (executor["queuedMessages"], executor["frontDue"], executor["behind"]) == (1, None, False)
