"""Appending a storage account: `python -m shared.store.rebalance` moves the collections the longer list places
in the new account (collection, jobs, history, claims), after which every API operation finds them and a due
entry left in the old account is dispatched from there exactly once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey, JobKey
from shared.model import JobExecutionStatus, JobHistoryActionName
from shared.occurrence import OccurrenceBatch
from shared.records import HistoryRecord
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store import bucket_of
from shared.store.rebalance import main, rebalance
from shared.store.routing import account_of
from tests.support.accounts import SUB, call, make_collections
from tests.support.clock import ManualClock
from tests.support.scheduler_client import drain_dispatch


def test_appending_an_account_and_rebalancing_keeps_every_collection_job_and_history(
    settings: Settings, second_azurite, clock: ManualClock
) -> None:
    one = Runtime.create(settings, clock)
    made = make_collections(one, 8)
    first = clock.now().replace(second=0) + timedelta(minutes=3)
    for group, name in made:
        answer = call(
            one,
            "Jobs_CreateOrUpdate",
            "PUT",
            group,
            name,
            "tick",
            {
                "properties": {
                    "startTime": first.isoformat(),
                    "recurrence": {"frequency": "Minute"},
                    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                }
            },
        )
        assert answer.status == 201, answer.body
        one.store.history.add(
            HistoryRecord(
                key=JobKey(SUB, group, name, "tick"),
                execution_id=f"run-{name}",
                expected_execution_time=clock.now(),
                start_time=clock.now(),
                end_time=clock.now(),
                action_name=JobHistoryActionName.MAIN_ACTION,
                status=JobExecutionStatus.COMPLETED,
                message="done",
                retry_count=0,
                repeat_count=0,
            ),
            clock.now(),
        )
    moving = [(g, n) for g, n in made if account_of(CollectionKey(SUB, g, n), 2) == 1]
    assert moving and len(moving) < len(made)

    second = StorageSettings(connection_string=second_azurite.connection_string)
    two_settings = replace(settings, data_accounts=(second,))
    two = Runtime.create(two_settings, clock)
    group, name = moving[0]
    assert call(two, "JobCollections_Get", "GET", group, name).status == 404  # why the move is needed
    counted = rebalance(two_settings, apply=False)
    assert (counted.collections, counted.jobs, counted.history) == (len(moving), len(moving), len(moving))
    moved = rebalance(two_settings, apply=True)
    assert moved == counted
    assert rebalance(two_settings, apply=True).collections == 0  # nothing left: a re-run is harmless

    listed = call(two, "JobCollections_ListBySubscription", "GET").body["value"]
    assert sorted((c["id"].split("/")[4], c["name"]) for c in listed) == sorted(made)
    for group, name in made:
        assert call(two, "Jobs_Get", "GET", group, name, "tick").status == 200
        history = call(two, "Jobs_ListJobHistory", "GET", group, name, "tick").body["value"]
        assert [h["properties"]["message"] for h in history] == ["done"]
        key = CollectionKey(SUB, group, name)
        holding = [a for a, store in enumerate(two.store.jobs.stores) if store.all(key)]
        assert holding == [account_of(key, 2)]

    # The moved jobs' due entries still lie in the primary: dispatched from there, once, and re-indexed at home.
    assert len(two.store.due.in_account(0).entries(bucket_of(first))) == len(made)
    clock.current = first + timedelta(seconds=10)
    dispatcher = Dispatcher(two.store, clock)
    for _ in range(2):
        dispatcher.fan_out()
        drain_dispatch(dispatcher)
    # The tick works a minute ahead: each job's occurrence at `first` and its next one, each queued once.
    # Occurrences travel in batches (one message per due second); the ones due at `first` are visible now,
    # each job's exactly once, and the following minute's batches wait hidden beside them, in real seconds: about
    # 45 s (50 less `early_visibility`) after they were sent, which two ticks' tasks on a loaded machine may pass.
    queued = [
        item
        for message in two.store.queue.client.peek_messages(max_messages=32)
        for item in OccurrenceBatch.from_json(message.content).items
    ]
    at_first = [(item.job.resource_group, item.job.collection) for item in queued if item.due == first]
    assert sorted(at_first) == sorted(made)
    assert {item.due for item in queued} <= {first, first + timedelta(minutes=1)}, queued
    assert two.store.queue.client.get_queue_properties().approximate_message_count > len(
        {message.due for message in queued}
    )
    assert two.store.due.entries(bucket_of(first)) == []
    following = bucket_of(first + timedelta(minutes=2))
    for account in (0, 1):
        expected = {n for g, n in made if account_of(CollectionKey(SUB, g, n), 2) == account}
        assert {e.job.collection for e in two.store.due.in_account(account).entries(following)} == expected


def test_the_command_line_counts_without_moving_unless_told(
    settings: Settings, second_azurite, clock, monkeypatch, capsys
) -> None:
    one = Runtime.create(settings, clock)
    made = make_collections(one, 6)
    moving = [n for g, n in made if account_of(CollectionKey(SUB, g, n), 2) == 1]
    assert settings.storage.connection_string is not None
    monkeypatch.setenv("AzureWebJobsStorage", settings.storage.connection_string)
    monkeypatch.setenv("SCHEDULER_TABLE_PREFIX", settings.table_prefix)
    monkeypatch.setenv("SCHEDULER_STORAGE_ACCOUNTS", second_azurite.connection_string)
    assert main([]) == 0
    assert f"to move: {len(moving)} collection(s), 0 job(s)" in capsys.readouterr().out
    assert main(["--apply"]) == 0
    assert f"moved: {len(moving)} collection(s)" in capsys.readouterr().out
    assert main([]) == 0
    assert "to move: 0 collection(s)" in capsys.readouterr().out
