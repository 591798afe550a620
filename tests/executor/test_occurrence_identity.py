"""One identity per occurrence on every action type (docs/execution.md, "One identity per occurrence"): the
Idempotency-Key header beside x-ms-execution-tag (Http), MessageId (Service Bus, so a queue with duplicate
detection drops a repeat: proven with the local AMQP peer doing duplicate detection) and ExecutionTag (the
Storage queue envelope); stable across retries and redeliveries; run-now and backfill get their own."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from shared.actions.http import HttpTarget
from shared.actions.service_bus import ServiceBusTarget
from shared.actions.storage_queue import envelope
from shared.keys import JobKey
from shared.model import JobErrorAction, JobExecutionStatus
from shared.occurrence import OccurrenceMessage, Trigger, execution_id
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.peers.amqp import AmqpPeer
from tests.executor.peers.servers import serve
from tests.executor.support import JC, RG, SUB, context, fixed, history, http, make_collection, put_job
from tests.support.scheduler_client import call, drain

KEY = JobKey(SUB, RG, JC, "job1")
AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def bus_queue(queue: str = "orders", **extra: object) -> dict[str, object]:
    return {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "queueName": queue,
            "namespace": "contoso-ns",
            "message": "tick",
            "transportType": "AMQP",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "Policy", "sasKey": "a2V5"},
            **extra,
        },
    }


def test_each_trigger_of_an_instant_is_its_own_execution() -> None:
    ids = {trigger: execution_id(KEY, AT, trigger) for trigger in Trigger}
    assert len(set(ids.values())) == len(Trigger)
    assert execution_id(KEY, AT, Trigger.SCHEDULE) == ids[Trigger.SCHEDULE]  # deterministic
    message = OccurrenceMessage(KEY, AT, AT)
    assert message.retry(AT).execution_id == message.error_action(AT).execution_id == message.execution_id


def test_http_sends_the_identity_as_idempotency_key_which_a_job_cannot_override(
    settings: Settings, http_target
) -> None:
    ctx = context()
    action = JobErrorAction.model_validate(
        {
            "type": "Http",
            "request": {
                "uri": http_target.url,
                "method": "GET",
                "headers": {"Idempotency-Key": "mine", "X-Other": "1"},
            },
        }
    )
    assert HttpTarget(settings).run(action, ctx).succeeded
    headers = http_target.requests[0].headers
    assert headers["idempotency-key"] == headers["x-ms-execution-tag"] == ctx.execution_id
    assert headers["x-other"] == "1"


def test_retries_of_an_occurrence_carry_one_idempotency_key_and_run_now_another(runtime: Runtime) -> None:
    answers = iter([500, 200, 200])
    server = serve(lambda hit: (next(answers), {}, b""))
    try:
        make_collection(runtime)
        put_job(runtime, "job1", {"action": http(server.url), "recurrence": {"frequency": "Hour"}}, retry=fixed(0.5, 2))
        drain(runtime, 20, until=lambda: len(server.hits) >= 2)
        assert call(runtime, "Jobs_Run", "POST", "job1").status == 200
        drain(runtime, 20, until=lambda: len(server.hits) >= 3)
    finally:
        server.close()
    first, retry, run_now = (hit.headers["idempotency-key"] for hit in server.hits)
    assert first == retry != run_now
    assert [hit.headers["x-ms-scheduler-attempt"] for hit in server.hits] == ["1", "2", "1"]


def test_service_bus_message_id_is_the_identity_unless_the_job_sets_one(
    settings: Settings, amqp_peer: AmqpPeer
) -> None:
    target = ServiceBusTarget(replace(settings, service_bus_endpoint=amqp_peer.endpoint), timeout=10)
    ctx = context()
    assert target.run(JobErrorAction.model_validate(bus_queue()), ctx).succeeded
    own = bus_queue(brokeredMessageProperties={"messageId": "chosen-by-the-job"})
    assert target.run(JobErrorAction.model_validate(own), ctx).succeeded
    first, second = amqp_peer.wait_for(2, 5)
    assert first.message.id == ctx.execution_id
    assert second.message.id == "chosen-by-the-job"


def test_a_redelivered_occurrence_reaches_a_duplicate_detecting_queue_once(
    settings: Settings, amqp_peer: AmqpPeer
) -> None:
    """A host that sends an occurrence again (a failover after the send, before it was recorded): the same
    MessageId, so the entity keeps one message."""
    amqp_peer.duplicate_detection = True
    target = ServiceBusTarget(replace(settings, service_bus_endpoint=amqp_peer.endpoint), timeout=10)
    ctx = context()
    action = JobErrorAction.model_validate(bus_queue())
    assert target.run(action, ctx).succeeded
    assert target.run(action, replace(ctx, client_request_id="another-attempt", attempt=1)).succeeded
    assert amqp_peer.deliveries == 2
    assert [r.message.id for r in amqp_peer.wait_for(1, 5)] == [ctx.execution_id]


def test_a_retry_after_a_lost_acknowledgement_is_dropped_by_duplicate_detection(
    settings: Settings, amqp_peer: AmqpPeer
) -> None:
    """End to end: the broker keeps the first send but the executor learns it failed, so the job's retry
    policy sends the occurrence again; duplicate detection keeps one message, and history shows both attempts."""
    amqp_peer.duplicate_detection, amqp_peer.lose_acks = True, 1
    rt = Runtime.create(replace(settings, service_bus_endpoint=amqp_peer.endpoint))
    make_collection(rt)
    put_job(rt, "job1", {"action": bus_queue()}, retry=fixed(0.5, 2))
    drain(rt, 30, until=lambda: len(history(rt, "job1")) >= 2)
    assert amqp_peer.deliveries == 2
    [kept] = amqp_peer.received
    entries = history(rt, "job1")
    assert [(e.retry_count, e.status) for e in entries] == [
        (1, JobExecutionStatus.COMPLETED),
        (0, JobExecutionStatus.FAILED),
    ]
    assert kept.message.id == entries[0].execution_id == entries[1].execution_id


def test_the_storage_queue_envelope_carries_the_identity_as_execution_tag() -> None:
    ctx = context()
    assert f"<ExecutionTag>{ctx.execution_id}</ExecutionTag>" in envelope(ctx, "m")
