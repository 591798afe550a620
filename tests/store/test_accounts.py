"""More than one storage account (SCHEDULER_STORAGE_ACCOUNTS), tested against two real Azurite instances:
collections hashed to accounts by collection, every API operation across them, lists that merge both and
page correctly, a dispatch fan-out over every account's due index, every occurrence fired exactly once, and
history and status read from the job's own account."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from devhost.azurite import Azurite
from shared.dispatcher import Dispatcher
from shared.keys import CollectionKey, JobKey
from shared.runtime import Runtime
from shared.settings import ConfigurationError, Settings, StorageSettings
from shared.store import ClaimStore, CollectionStore, DueIndex, HistoryStore, JobStore
from shared.store.keys import collection_partition, collection_row, job_partition, job_row, job_rows, job_rows_end
from shared.store.routed import RoutedClaims, RoutedDue, RoutedHistory, RoutedJobs
from shared.store.routing import RoutedCollections, account_of, jump_hash
from tests.support.accounts import SUB, call, make_collections
from tests.support.clock import ManualClock
from tests.support.scheduler_client import drain, drain_dispatch, settle


@pytest.fixture
def rt(settings: Settings, second_azurite: Azurite, clock: ManualClock) -> Iterator[Runtime]:
    second = StorageSettings(connection_string=second_azurite.connection_string)
    runtime = Runtime.create(replace(settings, data_accounts=(second,), due_shards=2), clock)
    yield runtime
    runtime.close()


def _rows(store: Any, partition: str, row: str) -> list[int]:
    """The accounts (indexes) whose table holds the entity."""
    return [i for i, inner in enumerate(store.stores) if inner.table.get(partition, row) is not None]


def test_every_public_repository_method_is_routed() -> None:
    # A method added to a repository and not routed would read or write one account only.
    pairs = [
        (CollectionStore, RoutedCollections),
        (JobStore, RoutedJobs),
        (HistoryStore, RoutedHistory),
        (ClaimStore, RoutedClaims),
        (DueIndex, RoutedDue),
    ]
    for base, routed in pairs:
        public = {name for name, _ in inspect.getmembers(base, inspect.isfunction) if not name.startswith("_")}
        exempt = RoutedDue.PRIMARY_ONLY if routed is RoutedDue else frozenset()
        missing = public - set(vars(routed)) - exempt
        assert not missing, f"{routed.__name__} does not route {sorted(missing)}"


def test_placement_is_stable_and_appending_an_account_moves_collections_only_to_it() -> None:
    keys = [CollectionKey("s", f"rg{i % 7}", f"c{i}") for i in range(2000)]
    # Pinned (checked against the paper's C++ reference): where data lives must never change between releases.
    assert [jump_hash(k, 5) for k in (0, 1, 2**40, 2**63 + 12345)] == [0, 0, 1, 2]
    assert [account_of(CollectionKey("s", "rg", f"c{i}"), 3) for i in range(8)] == [2, 2, 1, 2, 2, 1, 2, 0]
    for accounts in (1, 2, 3):
        before = [account_of(k, accounts) for k in keys]
        after = [account_of(k, accounts + 1) for k in keys]
        moved = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
        assert all(a == accounts for _, a in moved)  # only ever to the new account
        assert abs(len(moved) / len(keys) - 1 / (accounts + 1)) < 0.05
        assert set(Counter(after)) == set(range(accounts + 1))


def test_the_setting_lists_connection_strings_names_or_urls_and_none_keeps_one_account(azurite) -> None:
    primary = {
        "AzureWebJobsStorage__accountName": "primaryacct",
        "AzureWebJobsStorage__credential": "managedidentity",
        "AzureWebJobsStorage__clientId": "id-1",
    }
    assert Settings.from_environment(primary).data_accounts == ()
    listed = Settings.from_environment(
        {**primary, "SCHEDULER_STORAGE_ACCOUNTS": " second01 , https://third01.table.core.windows.net/ "}
    ).data_accounts
    assert [a.table_endpoint for a in listed] == [
        "https://second01.table.core.windows.net",
        "https://third01.table.core.windows.net",
    ]
    assert all(a.credential == "managedidentity" and a.client_id == "id-1" for a in listed)
    local = Settings.from_environment(
        {"AzureWebJobsStorage": "UseDevelopmentStorage=true", "SCHEDULER_STORAGE_ACCOUNTS": azurite.connection_string}
    )
    assert local.data_accounts[0].connection_string == azurite.connection_string
    assert "AccountKey" not in repr(local)  # keys are never printed
    for bad in ("primaryacct", "second01,second01", "Not An Account!", "a b"):
        with pytest.raises(ConfigurationError) as raised:
            Settings.from_environment({**primary, "SCHEDULER_STORAGE_ACCOUNTS": bad})
        assert "SCHEDULER_STORAGE_ACCOUNTS" in str(raised.value)


def test_collections_and_jobs_land_in_both_accounts_and_every_operation_works_across_them(rt: Runtime) -> None:
    made = make_collections(rt, 14)
    homes = {name: account_of(CollectionKey(SUB, group, name), 2) for group, name in made}
    assert set(homes.values()) == {0, 1}, homes  # both accounts hold collections
    for group, name in made:
        key = CollectionKey(SUB, group, name)
        assert _rows(rt.store.collections, collection_partition(key), collection_row(key)) == [homes[name]]
        for job in ("a", "b"):
            answer = call(
                rt,
                "Jobs_CreateOrUpdate",
                "PUT",
                group,
                name,
                job,
                {
                    "properties": {
                        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
                        "recurrence": {"frequency": "Hour"},
                        "startTime": "2026-08-01T00:00:00Z",
                    }
                },
            )
            assert answer.status == 201, answer.body
            assert _rows(rt.store.jobs, job_partition(key), job_row(JobKey(SUB, group, name, job))) == [homes[name]]
        assert call(rt, "JobCollections_Disable", "POST", group, name).status == 200
        assert call(rt, "JobCollections_Get", "GET", group, name).body["properties"]["state"] == "Disabled"
        settle(rt)  # the cascade to the jobs, queued by the disable
        assert call(rt, "Jobs_Get", "GET", group, name, "b").body["properties"]["state"] == "disabled"
        assert call(rt, "JobCollections_Enable", "POST", group, name).status == 200
        settle(rt)
        assert [j["name"] for j in call(rt, "Jobs_List", "GET", group, name).body["value"]] == [
            f"{name}/a",
            f"{name}/b",
        ]
        assert call(rt, "Jobs_Patch", "PATCH", group, name, "a", {"properties": {"state": "Disabled"}}).status == 200
        assert call(rt, "Jobs_Get", "GET", group, name, "a").body["properties"]["state"] == "disabled"
    expected = sorted(made)
    everything = call(rt, "JobCollections_ListBySubscription", "GET").body
    assert [(c["id"].split("/")[4], c["name"]) for c in everything["value"]] == expected
    assert everything["nextLink"] is None
    for group in ("rg-0", "rg-1"):
        listed = call(rt, "JobCollections_ListByResourceGroup", "GET", group).body["value"]
        assert [("rg-" + c["id"].split("/rg-")[1][0], c["name"]) for c in listed] == [
            e for e in expected if e[0] == group
        ]
    top = call(rt, "JobCollections_ListBySubscription", "GET", query={"$top": "5", "$skip": "4"}).body
    assert [c["name"] for c in top["value"]] == [name for _, name in expected[4:9]] and top["nextLink"] is None
    # Keyset pages of every size walk the merged list exactly once, in order.
    for size in (1, 3, 4, 13, 14, 15):
        seen, after = [], None
        while True:
            page, after = rt.store.collections.page_after(SUB, None, size, after)
            assert len(page) == size or after is None
            seen += [(r.key.resource_group, r.key.collection) for r in page]
            if after is None:
                break
        assert seen == expected, size
    third_of_rg1 = [e for e in expected if e[0] == "rg-1"][2]
    assert rt.store.collections.skip(SUB, "rg-1", 3) == (collection_row(CollectionKey(SUB, *third_of_rg1)), False)
    assert rt.store.collections.skip(SUB, None, 15) == (collection_row(CollectionKey(SUB, *expected[-1])), True)
    for account in (0, 1):  # PATCH a collection and DELETE a job, in each account
        group, name = next((g, n) for g, n in made if homes[n] == account)
        patched = call(rt, "JobCollections_Patch", "PATCH", group, name, body={"tags": {"home": str(account)}})
        assert patched.status == 200 and patched.body["tags"] == {"home": str(account)}, patched.body
        assert call(rt, "Jobs_Delete", "DELETE", group, name, "b").status == 200
        assert call(rt, "Jobs_Get", "GET", group, name, "b").status == 404
        assert [j["name"] for j in call(rt, "Jobs_List", "GET", group, name).body["value"]] == [f"{name}/a"]
    # Deleting a collection clears its jobs in its own account.
    group, name = next((g, n) for g, n in made if homes[n] == 1)
    assert call(rt, "JobCollections_Delete", "DELETE", group, name).status == 200
    assert call(rt, "JobCollections_Get", "GET", group, name).status == 404
    settle(rt)  # the purge, queued by the delete
    assert rt.store.jobs.all(CollectionKey(SUB, group, name)) == []
    assert len(call(rt, "JobCollections_ListBySubscription", "GET").body["value"]) == 13


def test_the_fan_out_covers_every_account_and_every_occurrence_fires_once(
    rt: Runtime, clock: ManualClock, http_target
) -> None:
    made = make_collections(rt, 6)
    first = clock.now().replace(second=0) + timedelta(minutes=3)  # beyond the API's fast path
    names = []
    for index, (group, name) in enumerate(made):
        for job in range(4):
            due = first + timedelta(seconds=5 * job + index)
            answer = call(
                rt,
                "Jobs_CreateOrUpdate",
                "PUT",
                group,
                name,
                f"j{job}",
                {
                    "properties": {
                        "startTime": due.isoformat(),
                        "action": {
                            "type": "Http",
                            "request": {"uri": f"{http_target.url}/{name}/j{job}", "method": "GET"},
                        },
                    }
                },
            )
            assert answer.status == 201, answer.body
            names.append(f"/{name}/j{job}")
    for account in (0, 1):  # each account's due index holds its own collections' entries
        in_account = {e.job.collection for e in rt.store.due.in_account(account).entries(first.strftime("%Y%m%d%H%M"))}
        assert in_account == {n for g, n in made if account_of(CollectionKey(SUB, g, n), 2) == account}
        assert in_account
    ran = set()
    for account in (0, 1):  # run now, in each account: queued by the API, fired by the executor below
        group, name = next((g, n) for g, n in made if account_of(CollectionKey(SUB, g, n), 2) == account)
        ran.add(name)
        assert call(rt, "Jobs_Run", "POST", group, name, "j3").status == 200
        names.append(f"/{name}/j3")
    clock.current = first + timedelta(seconds=30)  # every job is due; the dispatch queues them at once
    dispatcher = Dispatcher(rt.store, clock)
    for _ in range(2):  # a second tick (its overlap re-reads the same buckets) must change nothing
        report = dispatcher.fan_out()
        assert report.tasks == report.buckets * 2 * 2  # buckets x accounts x shards
        drain_dispatch(dispatcher)
        drain(rt, 3)
    fired = Counter(request.path for request in http_target.requests)
    assert fired == Counter(names)
    for group, name in made:  # status and history, each from the job's own account
        for job in range(4):
            state = call(rt, "Jobs_Get", "GET", group, name, f"j{job}").body["properties"]
            runs = 2 if name in ran and job == 3 else 1
            assert state["state"] == "completed" and state["status"]["executionCount"] == runs
            history = call(rt, "Jobs_ListJobHistory", "GET", group, name, f"j{job}").body["value"]
            assert [h["properties"]["status"] for h in history] == ["Completed"] * runs
            key = JobKey(SUB, group, name, f"j{job}")
            rows = {"pk": job_partition(key.collection_key), "low": job_rows(key), "high": job_rows_end(key)}
            holding = [
                i
                for i, inner in enumerate(rt.store.history.stores)
                if list(inner.table.query("PartitionKey eq @pk and RowKey ge @low and RowKey lt @high", rows))
            ]
            assert holding == [account_of(CollectionKey(SUB, group, name), 2)]
    assert rt.store.due.entries(first.strftime("%Y%m%d%H%M")) == []
