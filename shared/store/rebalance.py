"""Move collections to the storage account that SCHEDULER_STORAGE_ACCOUNTS now places them in.

Run it with the function app stopped, after appending an account to the list (docs/capacity.md, "Adding a
storage account"), with the app's settings in the environment:

    python -m shared.store.rebalance            # count what would move
    python -m shared.store.rebalance --apply    # move it

Contract: every collection found in an account other than its home (routing.account_of) is moved there,
job by job (the job's history and claims, then its row), then the collection row: each is copied as stored
(sealed secrets are bound to table keys, which do not change) and only then deleted where it was. A run
that dies part-way leaves copies in both accounts; the next run copies again and deletes, and a run after
a finished one finds nothing to move. Due-index entries stay where they lie: the dispatcher reads every
account's due index, dispatches such an entry from there, and indexes the job's following occurrence in
its new home. The app must not run meanwhile: a write to an old copy between its copy and its delete
would be lost.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from azure.core.exceptions import ResourceNotFoundError

from ..keys import CollectionKey
from ..settings import Settings
from . import Store
from .keys import job_partition
from .routing import account_of
from .storage import AzureStorage, Storage
from .tables import Entity, Table, chunks


@dataclass
class Moves:
    collections: int = 0
    jobs: int = 0
    history: int = 0
    claims: int = 0


def rebalance(settings: Settings, apply: bool, storage: Storage | None = None) -> Moves:
    """Move (or with `apply` False, count) every collection that lies outside its home account (of `storage`;
    the settings' accounts when None)."""
    storage = storage or AzureStorage(settings)
    if apply:
        Store.from_settings(settings, storage).ensure_ready(datetime.now(UTC))  # a new account has no tables yet
    accounts = 1 + len(settings.data_accounts)

    def table(account: int, name: str) -> Table:
        return storage.table(account, f"{settings.table_prefix}{name}")

    moves = Moves()
    for source in range(accounts):
        for row in _all(table(source, "Collections"), ["Subscription", "ResourceGroup", "Name"]):
            key = CollectionKey(row["Subscription"], row["ResourceGroup"], row["Name"])
            home = account_of(key, accounts)
            if home == source:
                continue
            moves.collections += 1
            jobs = list(table(source, "Jobs").query("PartitionKey eq @pk", {"pk": job_partition(key)}))
            claims = table(source, "AttemptClaims"), table(home, "AttemptClaims")
            moves.claims += _move(*claims, job_partition(key), apply)  # claims and history: the collection's
            moves.history += _move(table(source, "History"), table(home, "History"), job_partition(key), apply)
            for job in jobs:
                legacy = f"{job['PartitionKey']}|{job['RowKey']}"  # keys.job_scope: history's layout before
                moves.history += _move(table(source, "History"), table(home, "History"), legacy, apply)
                moves.jobs += _move_one(table(source, "Jobs"), table(home, "Jobs"), job, apply)
            whole = table(source, "Collections").get(row["PartitionKey"], row["RowKey"])
            if whole is not None:
                _move_one(table(source, "Collections"), table(home, "Collections"), whole, apply)
    return moves


def _all(table: Table, select: list[str]) -> list[Entity]:
    try:
        return list(table.query("PartitionKey ge @lo", {"lo": ""}, select=["PartitionKey", "RowKey", *select]))
    except ResourceNotFoundError:
        return []  # an account the app has not used yet


def _stored(entity: Entity) -> dict[str, Any]:
    return {k: v for k, v in entity.items() if k != "etag" and v is not None}


def _move(source: Table, target: Table, partition: str, apply: bool) -> int:
    """Copy a whole partition, then delete it from `source`; returns how many entities."""
    try:
        entities = list(source.query("PartitionKey eq @pk", {"pk": partition}))
    except ResourceNotFoundError:
        return 0
    if apply:
        for batch in chunks(entities, 100):  # one entity-group transaction per 100 (one partition)
            target.upsert_batch([_stored(e) for e in batch])
        for batch in chunks(entities, 100):
            source.delete_batch(partition, [e["RowKey"] for e in batch])
    return len(entities)


def _move_one(source: Table, target: Table, entity: Entity, apply: bool) -> int:
    if apply:
        target.upsert(_stored(entity))
        source.delete(entity["PartitionKey"], entity["RowKey"])
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shared.store.rebalance", description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="move (without it: only count what would move)")
    args = parser.parse_args(argv)
    moves = rebalance(Settings.from_environment(), args.apply)
    verb = "moved" if args.apply else "to move"
    print(
        f"{verb}: {moves.collections} collection(s), {moves.jobs} job(s), {moves.history} history entries, "
        f"{moves.claims} claim(s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
