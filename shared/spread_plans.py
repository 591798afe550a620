"""The dispatcher's automatic-spread plans (a collection's `autoSpread`, jobstate/auto_spread.py): for each
collection and minute of fire instants, how much later each occurrence fires, made once per process.

The plan of a minute needs every job of the collection, whichever shard a dispatch task holds, so the first task
of a process to dispatch an occurrence firing in that minute reads them (a query of the collection's partition),
with the rates of the destinations that pushed back (one query of their rows); the others of that minute use
it. A collection without autoSpread costs a read of its row per minute and process. Every process reads the same
rows, so the plans agree (jobstate/auto_spread.py says how far). A read that fails moves nothing: the occurrence
keeps its second and the executor's pacing holds its budget.
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
            rows = self.store.destinations.all() if self.store.destinations is not None else []
            learned = {name: state.rate for name, state in rows if state.rate is not None}
            return planned(record, self.store.jobs.all(collection), learned, minute, minute + MINUTE)
        except Exception:
            log.warning("the automatic spread of %s could not be planned", collection.resource_id, exc_info=True)
            return NOTHING_MOVED

    def _forget(self, before: datetime) -> None:
        for key in [k for k in self._plans if k[1] < before]:
            del self._plans[key]
            self._locks.pop(key, None)
