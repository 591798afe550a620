"""The process-wide wiring: settings, clock, store, dispatcher, executor. Built once, lazily."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .actions import ActionRunner
from .clock import Clock, SystemClock
from .dispatcher import Dispatcher
from .executor import Executor
from .settings import Settings
from .store import Store


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    store: Store
    dispatcher: Dispatcher
    executor: Executor

    @classmethod
    def create(cls, settings: Settings, clock: Clock | None = None, actions: ActionRunner | None = None) -> Runtime:
        clock = clock or SystemClock()
        store = Store.from_settings(settings)
        store.ensure_ready(clock.now())
        return cls(
            settings=settings,
            clock=clock,
            store=store,
            dispatcher=Dispatcher(store, clock, settings.dispatch_spread),
            executor=Executor(store, clock, actions or ActionRunner.from_settings(settings), settings),
        )


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
