"""The store: the only code that speaks Table Storage and Storage queues.

`Store` groups one repository per kind of record. Every read-modify-write passes the ETag it read;
a `ConcurrencyError` tells the caller to re-read and decide again.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime

from azure.core.exceptions import ResourceExistsError

from ..settings import ConfigurationError, Settings
from ..threads import ROUTING, Threads
from ..timings import Timings
from .claims import Claim, ClaimStore, Expired
from .collections import CollectionStore
from .destinations import DestinationRows
from .due import DueEntry, DueIndex, bucket_of, bucket_start, parse_partition, partition_of
from .expectations import ExpectationIndex
from .history import HistoryStore
from .jobs import JobStore
from .limits import ConcurrencyGates, HostPacers
from .queues import DispatchQueue, OccurrenceQueue
from .role_assignments import RoleAssignmentRecord, RoleAssignmentStore
from .routed import RoutedClaims, RoutedDue, RoutedHistory, RoutedJobs
from .routing import RoutedCollections
from .sealing import Keyring
from .storage import AzureStorage, Storage
from .tables import ConcurrencyError, Table, read_modify_write

__all__ = [
    "Claim",
    "ClaimStore",
    "CollectionStore",
    "ConcurrencyError",
    "ConcurrencyGates",
    "HostPacers",
    "DispatchQueue",
    "DueEntry",
    "DueIndex",
    "ExpectationIndex",
    "Expired",
    "HistoryStore",
    "JobStore",
    "OccurrenceQueue",
    "RoleAssignmentRecord",
    "RoleAssignmentStore",
    "Store",
    "bucket_of",
    "bucket_start",
    "parse_partition",
    "partition_of",
    "read_modify_write",
]


@dataclass
class Store:
    collections: CollectionStore
    jobs: JobStore
    due: DueIndex
    history: HistoryStore
    claims: ClaimStore
    queue: OccurrenceQueue
    dispatch: DispatchQueue
    role_assignments: RoleAssignmentStore
    # The settings' timings (shared/timings.py): the queues and claims apply them, and every component built over
    # the store (dispatcher, executor, leases) reads them here, so one process runs on one set.
    timings: Timings

    # Every table of every storage account (ensure_ready creates them); empty means the repositories' own.
    tables: tuple[Table, ...] = ()
    # Jobs that carry an expectation of success (store/expectations.py), on the primary's State table.
    expectations: ExpectationIndex | None = None
    # The cross-instance limits of issue 27 (store/limits.py), on the primary's Limits table: None when built
    # without them (a store made of its parts by a test).
    gates: ConcurrencyGates | None = None
    pacers: HostPacers | None = None
    destinations: DestinationRows | None = None  # destinations pushing back or failing (store/destinations.py)

    @classmethod
    def from_settings(cls, settings: Settings, storage: Storage | None = None, threads: Threads | None = None) -> Store:
        """The repositories over the primary account, or routed over every account of
        SCHEDULER_STORAGE_ACCOUNTS (routing.py); queues, watermark and role assignments on the primary.
        `storage`: where the tables and queues are (storage.py); the settings' accounts when None. `threads`: the
        process's (shared/threads.py), whose routing lane asks the accounts side by side; None: one by one."""
        storage = storage or AzureStorage(settings)
        accounts = range(1 + len(settings.data_accounts))
        made: list[Table] = []

        def table(account: int, name: str) -> Table:
            made.append(storage.table(account, f"{settings.table_prefix}{name}"))
            return made[-1]

        keyring = keyring_of(settings)
        state = table(0, "State")
        expectations = ExpectationIndex(state)
        collections = [CollectionStore(table(a, "Collections")) for a in accounts]
        jobs = [JobStore(table(a, "Jobs"), keyring, expectations) for a in accounts]
        due = [DueIndex(table(a, "Due"), state, settings.due_shards, a) for a in accounts]
        history = [HistoryStore(table(a, "History")) for a in accounts]
        claims = [ClaimStore(table(a, "AttemptClaims"), settings.timings) for a in accounts]
        limits = table(0, "Limits")
        single = len(accounts) == 1
        return cls(
            collections=collections[0] if single else RoutedCollections(collections, _routing(threads)),
            jobs=jobs[0] if single else RoutedJobs(jobs),
            due=due[0] if single else RoutedDue(due),
            history=history[0] if single else RoutedHistory(history),
            claims=claims[0] if single else RoutedClaims(claims),
            queue=OccurrenceQueue(
                storage.queue(settings.occurrence_queue),
                storage.queue(f"{settings.occurrence_queue}-poison"),
                settings.timings,
            ),
            dispatch=DispatchQueue(storage.queue(settings.dispatch_queue), settings.timings),
            role_assignments=RoleAssignmentStore(table(0, "RoleAssignments")),
            timings=settings.timings,
            tables=tuple(made),
            expectations=expectations,
            gates=ConcurrencyGates(limits),
            pacers=HostPacers(limits),
            destinations=DestinationRows(limits),
        )

    def ensure_ready(self, now: datetime) -> None:
        """Create tables and the queue if missing, and set the dispatcher's first watermark. Idempotent."""
        tables = self.tables or (
            self.collections.table,
            self.jobs.table,
            self.due.table,
            self.due.state,
            self.history.table,
            self.claims.table,
            self.role_assignments.table,
            *((self.gates.table,) if self.gates is not None else ()),
            *((self.pacers.table,) if self.pacers is not None else ()),
        )
        for table in tables:
            table.ensure_exists()
        self.queue.ensure_exists()
        self.dispatch.ensure_exists()
        self.due.init_watermark(now)


def keyring_of(settings: Settings) -> Keyring | None:
    """The keyring for secrets at rest: SCHEDULER_SECRET_KEYS; the development key on Azurite; else none."""
    if settings.secret_keys:
        try:
            return Keyring.parse(settings.secret_keys)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
    return Keyring.development() if settings.uses_development_storage else None


def _routing(threads: Threads | None) -> Executor | None:
    return threads.lane(ROUTING) if threads is not None else None
