"""Pacing of a target host's rate limit: which instants a batch of requests may start at. Pure.

A collection's `targetRateLimits` rule for a host allows `requestsPerSecond` requests a second. The requests are
paced, not refused: each gets a slot of its own, 1/rate apart, handed out in the order they are asked for
(the order their occurrences become due), so 1,000 requests at 50 per second start 20 ms apart over 20 s,
none lost, none doubled. This is the generic cell rate algorithm, a token bucket of depth one: the one number
kept per host is the next free slot (`next_free`, its "theoretical arrival time"); a host left idle has its next
free slot in the past, and the next request starts at once. Slots are computed from the start of each
reservation with exact integer microseconds (no drift over long runs).

On the wire (`window_of`, `send_at`): a process sends its requests under one rule no closer than its slots say,
and keeps a window of the requests it sent: at most `n` of them in any `n / (rate * share)` seconds (n: the
rate's whole requests a second, at least one), and none closer than half a slot to the one before. The slots are
handed out at `share` of the rate too; the window only tells when a request that came late to its slot may still
go, so the jitter between the slot and the wire (a connection's set-up, a busy event loop) never shows as more
than `n` in a one-second window, and a process behind its slots catches up within a window.

Which rule paces a request (`rule_for`): the rule naming its host exactly, else the `*.` rule of the longest
domain the host lies under; none: it is not paced. Hosts compare as the wire names them (model/concurrency.py
`host_key`): names in ASCII ignoring ASCII case (an internationalised name in its IDNA form, as the HTTP client
sends it), IP addresses by their canonical text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from ..model import JobActionType, JobErrorAction, TargetRateLimit
from ..model.concurrency import host_key
from ..occurrence import OccurrenceMessage
from ..records import CollectionRecord


@dataclass(frozen=True)
class Paced:
    slots: tuple[datetime, ...]  # when each of the k requests may start, in order
    next_free: datetime  # the host's next free slot after them: the state to keep

    @property
    def last(self) -> datetime | None:
        return self.slots[-1] if self.slots else None


def spacing(rate: float) -> timedelta:
    """The time between two slots at `rate` requests per second (at least one microsecond)."""
    return timedelta(microseconds=max(1, round(1_000_000 / rate)))


def pace(next_free: datetime | None, rate: float, now: datetime, k: int) -> Paced:
    """Slots for `k` requests asked for at `now`, after the host's `next_free` slot (None: never used)."""
    if rate <= 0:
        raise ValueError("a rate limit is a positive number of requests per second")
    start = now if next_free is None or next_free < now else next_free
    slots = tuple(start + timedelta(microseconds=round(i * 1_000_000 / rate)) for i in range(k))
    # The end rounded up, never down: reservations of one slot each would otherwise run faster than the rate by
    # up to half a microsecond per slot (0.05 % at 1,000/s), a request too many per window over a long backlog.
    return Paced(slots, start + timedelta(microseconds=max(k, math.ceil(k * 1_000_000 / rate))))


def window_of(rate: float, share: float) -> tuple[int, float]:
    """The wire window of a rule: at most n requests (its whole requests a second, at least one) in how many
    seconds (n slots at `share` of the rate)."""
    n = max(1, math.floor(rate))
    return n, n / (rate * share)


def send_at(sent: Sequence[float], rate: float, share: float, now: float, not_before: float) -> float:
    """When the next request may go on the wire (seconds on one monotonic clock): not before its slot
    (`not_before`), half a slot after the last one `sent`, and a window after the n-th last (`window_of`)."""
    n, window = window_of(rate, share)
    at = max(now, not_before)
    if sent:
        at = max(at, sent[-1] + 0.5 / (rate * share))
    if len(sent) >= n:
        at = max(at, sent[-n] + window)
    return at


def rule_for(host: str, rules: Sequence[TargetRateLimit] | None) -> TargetRateLimit | None:
    """The rule that paces requests to `host`: the exact one, else the `*.` one of the longest matching domain."""
    if not rules or not host:
        return None
    name = host_key(host.rstrip("."))
    best: TargetRateLimit | None = None
    for rule in rules:
        pattern = host_key(rule.host)
        if pattern == name:
            return rule
        under = pattern.startswith("*.") and name.endswith(pattern[1:]) and len(name) > len(pattern) - 1
        if under and (best is None or len(pattern) > len(best.host)):
            best = rule
    return best


def target_host(uri: str) -> str | None:
    """The host name an Http action's uri names (what `rule_for` matches), or None for a malformed uri."""
    try:
        host = urlsplit(uri).hostname
    except ValueError:
        return None
    return host or None


def pacer_key(rule: TargetRateLimit) -> str:
    """The name of the rule's pacer: its host as compared (`*.` rules pace every host under them together)."""
    return host_key(rule.host)


def rule_of(
    record: CollectionRecord | None, action: JobErrorAction, message: OccurrenceMessage
) -> TargetRateLimit | None:
    """The collection's rule pacing the attempt's request: by the host it goes to (a poll's: its Location's)."""
    if action.type not in (JobActionType.HTTP, JobActionType.HTTPS) or action.request is None:
        return None
    uri = message.poll.location if message.poll is not None else action.request.uri
    properties = record.definition.properties if record is not None else None
    rules = properties.target_rate_limits if properties is not None else None
    host = target_host(uri) if rules else None
    return rule_for(host, rules) if host else None
