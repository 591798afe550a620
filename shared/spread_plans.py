"""The dispatcher's automatic-spread plans (a collection's `autoSpread`, jobstate/auto_spread.py): for each
collection and minute of fire instants, how much later each occurrence fires, made once per process.

The plan of a minute needs every job of the collection, whichever shard a dispatch task holds, so the first task
of a process to dispatch an occurrence firing in that minute reads them (a query of the collection's partition),
with the rates of the destinations that pushed back (one query of their rows per minute, shared by every
collection's plan of that minute); the others of that minute use it. A collection without autoSpread costs a read
of its row per minute and process. Every process reads the same rows, so the plans agree (jobstate/auto_spread.py
says how far). A read that fails moves nothing: the occurrence keeps its second and the executor's pacing holds
its budget.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from .jobstate.auto_spread import NOTHING_MOVED, SpreadPlan, planned, tolerance_of
from .keys import CollectionKey
from .records import JobRecord
from .store import Store

log = logging.getLogger(__name__)

MINUTE = timedelta(minutes=1)
KEPT = timedelta(minutes=10)  # plans of minutes this far before the latest asked for are dropped


class SpreadPlans:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._plans: dict[tuple[CollectionKey, datetime], SpreadPlan] = {}
        self._locks: dict[tuple[CollectionKey, datetime], threading.Lock] = {}
        self._guard = threading.Lock()
        self._rates: tuple[datetime, dict[str, float]] | None = None  # (minute, learned rates) of the latest plan

    def offset(self, job: JobRecord, occurrence: datetime, fire: datetime) -> timedelta:
        """How much later than `fire` the job's `occurrence` fires."""
        minute = fire.replace(second=0, microsecond=0)
        return self._plan(job.key.collection_key, minute).offset(job.key, occurrence)

    def _plan(self, collection: CollectionKey, minute: datetime) -> SpreadPlan:
        key = (collection, minute)
        with self._guard:
            plan = self._plans.get(key)
            if plan is not None:
                return plan
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one read per (collection, minute); the other tasks of that minute wait for it
            with self._guard:
                plan = self._plans.get(key)
            if plan is None:
                plan = self._made(collection, minute)
                with self._guard:
                    self._plans[key] = plan
                    self._forget(minute - KEPT)
        return plan

    def _made(self, collection: CollectionKey, minute: datetime) -> SpreadPlan:
        try:
            record = self.store.collections.get(collection)
            if record is None or tolerance_of(record) is None:
                return NOTHING_MOVED
            return planned(record, self.store.jobs.all(collection), self._learned(minute), minute, minute + MINUTE)
        except Exception:
            log.warning("the automatic spread of %s could not be planned", collection.resource_id, exc_info=True)
            return NOTHING_MOVED

    def _learned(self, minute: datetime) -> dict[str, float]:
        """The destinations' learned rates, read once per minute for every collection's plan of that minute."""
        kept = self._rates
        if kept is not None and kept[0] == minute:
            return kept[1]
        rows = self.store.destinations.all() if self.store.destinations is not None else []
        rates = {name: state.rate for name, state in rows if state.rate is not None}
        self._rates = (minute, rates)  # two plans made at once may both read: the same rows, no harm
        return rates

    def _forget(self, before: datetime) -> None:
        for key in [k for k in self._plans if k[1] < before]:
            del self._plans[key]
            self._locks.pop(key, None)
