"""Attempt guards: what lets a live worker pick up, within seconds, an attempt a dead worker was holding.

The queue trigger's own message cannot do it: the host keeps a received message invisible for ten
minutes (renewing it while the function runs), so a worker that dies holding messages hides them that
long. So every delivery, before it does anything else, sends a *watchdog*: a copy of its message,
hidden until just after the attempt's lease would run out. While the attempt is alive, a renewer pushes
both the claim's lease and the watchdog's visibility forward every RENEW_EVERY seconds. When the attempt
ends (however it ends, short of the process dying) the watchdog is deleted. When the process dies, the
watchdog turns visible a few seconds later, any live worker receives it, finds the claim's lease expired
and not renewed, takes the claim over (claims.py) and runs the attempt, or, when the first runner had
finished it, just marks it done.

Costs two queue operations per delivery (send, delete) and, for attempts longer than RENEW_EVERY, two more
per renewal. A failed renewal (storage unreachable) is retried every second until the attempt ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from azure.core.exceptions import HttpResponseError

from .clock import Clock
from .occurrence import OccurrenceMessage
from .store import Claim, Store
from .store.claims import LEASE, RENEW_EVERY
from .store.queue import Receipt

log = logging.getLogger(__name__)

# The watchdog turns visible this long after the lease runs out, so it finds the lease expired.
WATCHDOG_MARGIN = timedelta(seconds=1)


@dataclass(eq=False)
class Guard:
    message: OccurrenceMessage
    watchdog: Receipt | None = None
    claim: Claim | None = None
    next_renewal: float = field(default_factory=lambda: time.monotonic() + RENEW_EVERY)
    lost: bool = False  # the claim was taken over: a renewal must not take it back


class Guards:
    """Opens, renews and closes attempt guards; one renewer thread per process, started on first use."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._active: set[Guard] = set()
        self._lock = threading.Lock()
        self._renewer: threading.Thread | None = None

    def lease_until(self, message: OccurrenceMessage) -> datetime:
        """Where a claim's lease ends when taken or renewed now: LEASE past the due time, or past now."""
        return max(message.due, self.clock.now()) + LEASE

    def open(self, message: OccurrenceMessage) -> Guard:
        """Send the watchdog; raises on a storage fault (the host then redelivers, nothing was claimed)."""
        hidden = (self.lease_until(message) + WATCHDOG_MARGIN - self.clock.now()).total_seconds()
        guard = Guard(message, self.store.queue.send_hidden(message, hidden))
        with self._lock:
            self._active.add(guard)
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew_forever, name="attempt-renewer", daemon=True)
                self._renewer.start()
        return guard

    def close(self, guard: Guard) -> None:
        """The attempt ended: stop renewing and delete the watchdog (best effort: a watchdog that survives
        finds the attempt done, later, and is dropped)."""
        with self._lock:
            self._active.discard(guard)
        if guard.watchdog is not None:
            try:
                self.store.queue.delete(guard.watchdog)
            except Exception as error:  # noqa: BLE001 - harmless leftover, see above
                log.warning("could not delete the watchdog of %s: %s", guard.message.claim_id, type(error).__name__)

    def _renew_forever(self) -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with self._lock:
                due = [g for g in self._active if g.next_renewal <= now]
            for guard in due:
                with contextlib.suppress(Exception):  # logged in renew; retried on the next pass
                    self.renew(guard)

    def renew(self, guard: Guard) -> None:
        """Push the claim's lease and the watchdog's visibility forward; on failure retry in a second."""
        guard.next_renewal = time.monotonic() + 1.0
        until = self.lease_until(guard.message)
        try:
            if guard.claim is not None and not guard.lost and not self.store.claims.renew(guard.claim, until):
                guard.lost = True
                log.warning("attempt %s was taken over while it ran", guard.message.claim_id)
            if guard.watchdog is not None:
                hidden = (until + WATCHDOG_MARGIN - self.clock.now()).total_seconds()
                guard.watchdog = self._rehide(guard.watchdog, guard.message, hidden)
        except Exception as error:
            log.warning("renewing attempt %s failed: %s", guard.message.claim_id, type(error).__name__)
            raise
        guard.next_renewal = time.monotonic() + RENEW_EVERY

    def _rehide(self, watchdog: Receipt, message: OccurrenceMessage, hidden: float) -> Receipt:
        try:
            return self.store.queue.hide(watchdog, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):  # PopReceiptMismatch / MessageNotFound
                raise
            # Another worker received it (its pop receipt changed): it found this attempt alive and
            # dropped it. Send a fresh one, so the attempt stays covered.
            return self.store.queue.send_hidden(message, hidden)
