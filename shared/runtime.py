"""The process-wide wiring: settings, clock, threads, store, dispatcher, executor. Built once, lazily.

The runtime owns the process's threads (shared/threads.py): `create` makes them and hands their lanes to the store,
the dispatcher, the executor and the action runner; the lifecycle and the dispatch trigger take them from the
runtime. `close` ends them: no lane takes work any more, the lease renewers stop.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

from .actions import ActionRunner
from .clock import Clock, clock_with_offset
from .dispatcher import Dispatcher
from .executor import Executor
from .group_commit import GroupCommit
from .keys import CollectionKey
from .records import CollectionRecord
from .settings import Settings
from .store import Store
from .store.storage import Storage
from .threads import Threads


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    store: Store
    dispatcher: Dispatcher
    executor: Executor
    # When this process began serving (the runtime is built on its first use): health does not hold the ticks
    # before it against this host (shared/health.py). None: unknown (a runtime assembled by hand).
    started: datetime | None = None
    # Every lane of the process (shared/threads.py); a runtime assembled by hand gets threads of its own.
    threads: Threads = field(default_factory=Threads)
    # The action targets, closed with the runtime (the managed identity's connections); None: assembled by hand.
    actions: ActionRunner | None = None
    # The creates of this process share the writes of their collection's job count (lifecycle/job_count.py).
    job_counts: GroupCommit[CollectionKey, tuple[int, int, CollectionRecord]] = field(default_factory=GroupCommit)

    @classmethod
    def create(
        cls,
        settings: Settings,
        clock: Clock | None = None,
        actions: ActionRunner | None = None,
        storage: Storage | None = None,
    ) -> Runtime:
        """`storage`: where the store's tables and queues are (shared/store/storage.py); the settings' accounts
        when None, a `MemoryStorage` on the same clock for a run in memory."""
        clock = clock or clock_with_offset(settings.clock_offset)  # the local host's offset, if any
        threads = Threads(clock)  # the renewers' periods on the runtime's clock
        try:
            store = Store.from_settings(settings, storage, threads)
            started = clock.now()
            store.ensure_ready(started)
            actions = actions or ActionRunner.from_settings(settings, threads)
            return cls(
                settings=settings,
                clock=clock,
                store=store,
                dispatcher=Dispatcher(store, clock, settings.dispatch_spread, threads=threads),
                executor=Executor(store, clock, actions, settings, threads),
                started=started,
                threads=threads,
                actions=actions,
            )
        except BaseException:
            threads.close()
            raise

    def close(self) -> None:
        """End the runtime's threads: queued work is cancelled, the renewers' loops end (shared/threads.py); close
        the action targets' connections."""
        self.threads.close()
        if self.actions is not None:
            self.actions.close()


_lock = threading.Lock()
_runtimes: dict[Settings, Runtime] = {}


def runtime() -> Runtime:
    """The runtime for this process's current app settings, built on first use.

    Keyed by the settings rather than built once, so a process that hosts the app again with other
    settings (the local host, the test session) gets a runtime that matches them.
    """
    settings = Settings.from_environment()
    with _lock:
        found = _runtimes.get(settings)
        if found is None:
            found = _runtimes[settings] = Runtime.create(settings)
        return found
