"""Batch guards: what lets a live worker pick up, within seconds, the attempts a dead worker was holding.

The queue trigger's own message cannot do it: the host keeps a received message invisible for ten
minutes (renewing it while the function runs), so a worker that dies holding messages hides them that
long. So every delivery, before it does anything else, holds a *watchdog*: a copy of its message (the
whole batch), hidden until just after the attempts' leases would run out. Whoever queued the batch sent that
copy just before it (store/queue.py) and the batch names it, so a first delivery takes it over; a
redelivery, a batch received after its second, or one that names none, sends a copy of its own. Claims are
taken with a lease that runs LEASE past the batch's due second, so nothing is renewed while the batch waits
for its second; from then on, while the batch is alive, a renewer pushes every claim's lease and the
watchdog's visibility forward every RENEW_EVERY seconds. When the batch ends (however it ends, short of the
process dying) the watchdog is deleted. When the process dies, the watchdog turns visible a few seconds
later, any live worker receives it, finds the claims' leases expired and not renewed, takes them over
(claims.py) and runs the attempts, or, for an attempt the first runner had finished, just marks it done.

Costs two queue operations per delivery (send, by the sender or here; delete), whatever the batch's size,
and, for batches that run longer than RENEW_EVERY past their second, one table operation per claim and one
queue operation per renewal. A failed renewal (storage unreachable) is retried every second until the batch
ends.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from azure.core.exceptions import HttpResponseError

from .clock import Clock
from .occurrence import OccurrenceBatch
from .store import Claim, Store
from .store.claims import LEASE, RENEW_EVERY
from .store.queue import WATCHDOG_AFTER, Receipt, watchdog_delay

log = logging.getLogger(__name__)

# The watchdog turns visible this long after the lease runs out, so it finds the lease expired.
WATCHDOG_MARGIN = WATCHDOG_AFTER - LEASE
# Claims renewed side by side: a process holding a herd of slow actions (a thousand claims) renews them all
# well within RENEW_EVERY, where one at a time (5-10 ms each in a region) would let leases lapse.
RENEWAL_THREADS = 16


@dataclass(eq=False)
class Guard:
    batch: OccurrenceBatch
    watchdog: Receipt | None = None
    claims: dict[str, Claim] = field(default_factory=dict)  # by claim id: the attempts this delivery holds
    next_renewal: float = field(default_factory=lambda: time.monotonic() + RENEW_EVERY)
    lost: set[str] = field(default_factory=set)  # claims taken over: a renewal must not take them back

    def hold(self, claim: Claim) -> None:
        self.claims[claim.claim_id] = claim

    def drop(self, claim_id: str) -> None:
        """The attempt ended: its claim needs no more renewals."""
        self.claims.pop(claim_id, None)


class Guards:
    """Opens, renews and closes attempt guards; one renewer thread per process, started on first use."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._active: set[Guard] = set()
        self._lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self._renewals = ThreadPoolExecutor(RENEWAL_THREADS, thread_name_prefix="lease-renewal")

    def lease_until(self, batch: OccurrenceBatch) -> datetime:
        """Where a claim's lease ends when taken or renewed now: LEASE past the batch's last due time, or past now."""
        return max(batch.last_due, self.clock.now()) + LEASE

    def open(self, batch: OccurrenceBatch, first_delivery: bool = True) -> Guard:
        """Take over the batch's watchdog or send one; raises on a storage fault (the host then redelivers,
        nothing was claimed)."""
        now = self.clock.now()
        # The first renewal is due RENEW_EVERY after the batch's second: the leases run LEASE past it.
        wait = max((batch.last_due - now).total_seconds(), 0.0)
        hidden = watchdog_delay(batch, now)
        if batch.watchdog is None:
            watchdog = self.store.queue.send_hidden(batch.without_watchdog(), hidden)
        elif first_delivery and now < batch.last_due:
            # Hidden until the batch's second + WATCHDOG_AFTER, just where this delivery's leases end, and
            # untouched: nobody renews a watchdog before a delivery holds it.
            watchdog = Receipt(*batch.watchdog)
        else:
            # Received after its second, its watchdog could turn visible while this delivery's leases
            # live; a redelivery's may have been renewed or deleted by the delivery before: hide it anew
            # (or, when it is gone, send one).
            watchdog = self._rehide(Receipt(*batch.watchdog), batch, hidden)
        guard = Guard(batch, watchdog, next_renewal=time.monotonic() + wait + RENEW_EVERY)
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
            except Exception as error:
                log.warning("could not delete the watchdog of %s: %s", _name(guard), type(error).__name__)

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
        """Push the claims' leases and the watchdog's visibility forward; on failure retry in a second."""
        guard.next_renewal = time.monotonic() + 1.0
        until = self.lease_until(guard.batch)
        try:
            held = [claim for claim in list(guard.claims.values()) if claim.claim_id not in guard.lost]
            renewed = list(self._renewals.map(lambda claim: self.store.claims.renew(claim, until), held))
            for claim, kept in zip(held, renewed, strict=True):
                if not kept:
                    guard.lost.add(claim.claim_id)
                    log.warning("attempt %s was taken over while it ran", claim.claim_id)
            if guard.watchdog is not None:
                hidden = (until + WATCHDOG_MARGIN - self.clock.now()).total_seconds()
                guard.watchdog = self._rehide(guard.watchdog, guard.batch, hidden)
        except Exception as error:
            log.warning("renewing %s failed: %s", _name(guard), type(error).__name__)
            raise
        guard.next_renewal = time.monotonic() + RENEW_EVERY

    def _rehide(self, watchdog: Receipt, message: OccurrenceBatch, hidden: float) -> Receipt:
        try:
            return self.store.queue.hide(watchdog, hidden)
        except HttpResponseError as error:
            if error.status_code not in (400, 404):  # PopReceiptMismatch / MessageNotFound
                raise
            # Another worker received it (its pop receipt changed): it found these attempts alive and
            # dropped them. Send a fresh one, so the batch stays covered.
            return self.store.queue.send_hidden(message.without_watchdog(), hidden)


def _name(guard: Guard) -> str:
    first = guard.batch.items[0].claim_id
    return first if len(guard.batch.items) == 1 else f"the batch of {len(guard.batch.items)} from {first}"
