"""A destination that pushes back (issue 40): how fast the scheduler may send to it, shared by every job and every
instance. Pure; the circuit over the same state is circuit.py's, the I/O shell executor/destinations.py.

A destination is where an action's requests go, as the target sees them (`destination_key`): an Http action's
host with its port when the uri names one, a Service Bus namespace, a storage account.

A 429 or 503 answer (`pushed_back`) tightens the destination's budget, `rate` requests a second:
- the first push-back (no budget yet) sets it to PUSHED_SHARE of the requests the answering process saw the
  destination accept in the second before (`accepted`; at least FLOOR_RATE), so a herd against a target that
  takes 50 a second goes on at 45;
- a push-back of a request sent before its process knew of the budget (not `paced`) only raises it to the best
  such estimate (the answers of one burst arrive over a second or more, each counting more accepted requests;
  several instances each count their own share, and the largest share is below their sum, so the budget errs low);
- a push-back of a request paced at the budget halves it (multiplicative decrease), once per EPISODE: the
  requests paced at the old budget that are already on their way are answers to the same mistake;
- while the hold lasts, each success raises it to the best estimate (`learned`): a target whose successes take
  longer than its 429s has none counted when the first push-back sets the budget.
The refused attempts wait for the hold's end, then take their slots of the budget as it is by then.
Its Retry-After (seconds or a date, at most `deadline` ahead) holds every request until then (`hold_until`); one
without Retry-After holds DEFAULT_HOLD.

Requests to a destination with a budget take consecutive slots of its own pacer (`reserve`: the next free slot,
1/rate apart, never before the hold), as pacing.py's host rules do, so every instance shares one budget. The
budget widens again as answers succeed: after `quiet` without a push-back, by WIDEN per `quiet`; after `forget`
without one the destination is free again (no budget, no pacer). A static `targetRateLimits` rule stays the
ceiling: it paces on its own (executor/limits.py), after this.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from ..model import JobActionType, JobErrorAction
from ..model.concurrency import host_key
from ..occurrence import OccurrenceMessage
from .pacing import pace

PUSHED_SHARE = 0.9  # of the rate the target was seen to accept: a margin for the jitter of a shared pacer
FLOOR_RATE = 0.2  # requests a second at least: a target that refuses everything is still asked every 5 s
WIDEN = 1.25  # the budget grows by this factor per quiet period (additive-increase would take minutes at 1,000/s)
EPISODE = timedelta(seconds=1)  # push-backs this close to the first are answers to one burst
DEFAULT_HOLD = timedelta(seconds=1)  # a 429 or 503 without Retry-After holds the destination this long


@dataclass(frozen=True)
class DestinationState:
    """One destination's push-back and circuit, as one row holds it for every instance (`clear`: nothing to hold)."""

    rate: float | None = None  # requests a second while pushed back; None: no budget
    next_free: datetime | None = None  # the budget's next free slot
    hold_until: datetime | None = None  # its latest Retry-After
    pushed_at: datetime | None = None  # the latest push-back
    episode_at: datetime | None = None  # the first push-back of the latest burst
    widened_at: datetime | None = None
    last_status: int | None = None  # the latest push-back's status (429 or 503)
    # The circuit (circuit.py).
    failures: int = 0  # failures in a row (timeouts, refused connections, 5xx other than 503)
    failing_since: datetime | None = None
    failed_at: datetime | None = None  # the latest failure
    open_until: datetime | None = None  # open: no request before this but the probe's
    probe: str | None = None  # the attempt probing (its claim id), until `open_until`

    @property
    def clear(self) -> bool:
        return self.rate is None and self.failures == 0 and self.open_until is None


def destination_key(action: JobErrorAction, message: OccurrenceMessage | None = None) -> str | None:
    """The destination an attempt's request goes to (None: it names none). A poll goes to its Location's host."""
    if action.type in (JobActionType.HTTP, JobActionType.HTTPS) and action.request is not None:
        uri = message.poll.location if message is not None and message.poll is not None else action.request.uri
        return _http(uri)
    if action.type == JobActionType.STORAGE_QUEUE and action.queue_message is not None:
        return f"queue:{action.queue_message.storage_account.lower()}"
    bus = action.service_bus_queue_message or action.service_bus_topic_message
    if bus is not None and bus.namespace:
        return f"servicebus:{bus.namespace.lower()}"
    return None


def _http(uri: str) -> str | None:
    try:
        parts = urlsplit(uri)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    name = host_key(host.rstrip("."))
    if ":" in name:  # an IPv6 address: bracketed, as in a URL, so its port is told from its last group
        name = f"[{name}]"
    return f"{name}:{port}" if port is not None else name


def pushed_back(
    state: DestinationState,
    now: datetime,
    status: int,
    accepted: int,
    retry_after: float | None,
    deadline: timedelta,
    paced: bool,
) -> DestinationState:
    """The state after a 429 or 503 answered at `now`; `accepted`: what the answering process saw the destination
    accept in the second before; `paced`: the refused request had waited for its slot of the budget."""
    learned = max(FLOOR_RATE, accepted * PUSHED_SHARE)
    if state.rate is None:
        rate, episode = learned, now
    elif not paced:
        rate, episode = max(state.rate, learned), state.episode_at or now
    elif state.episode_at is not None and now - state.episode_at <= EPISODE:
        rate, episode = state.rate, state.episode_at
    else:
        rate, episode = max(FLOOR_RATE, state.rate / 2), now
    hold = now + (timedelta(seconds=retry_after) if retry_after is not None and retry_after > 0 else DEFAULT_HOLD)
    hold = min(hold, now + deadline)
    if state.hold_until is not None and state.hold_until > hold:
        hold = state.hold_until
    next_free = hold if state.next_free is None or state.next_free < hold else state.next_free
    return replace(
        state,
        rate=rate,
        next_free=next_free,
        hold_until=hold,
        pushed_at=now,
        episode_at=episode,
        widened_at=None,
        last_status=status,
    )


def learned(state: DestinationState, now: datetime, accepted: int) -> DestinationState:
    """While the hold lasts, the budget rises to what the destination was seen to accept in the second before
    (`accepted`, at PUSHED_SHARE): a target that answers its successes more slowly than its 429s has none counted
    when the first push-back sets the budget."""
    if state.rate is None or state.hold_until is None or now > state.hold_until:
        return state
    rate = max(state.rate, FLOOR_RATE, accepted * PUSHED_SHARE)
    return state if rate == state.rate else replace(state, rate=rate)


def widened(state: DestinationState, now: datetime, quiet: timedelta, forget: timedelta) -> DestinationState:
    """The budget after answers went on succeeding: WIDEN per `quiet` since the latest push-back (or widening),
    none at all after `forget`."""
    if state.rate is None or state.pushed_at is None:
        return state
    if now - state.pushed_at >= forget:
        return replace(state, rate=None, next_free=None, hold_until=None, episode_at=None, widened_at=None)
    since = state.widened_at or state.pushed_at
    periods = (now - since) // quiet
    if periods < 1:
        return state
    return replace(state, rate=state.rate * WIDEN**periods, widened_at=since + periods * quiet)


def reserve(state: DestinationState, now: datetime, k: int) -> tuple[DestinationState, list[datetime]]:
    """k consecutive slots of the destination's budget (each request asked for now starts at its slot, none
    before the hold); no budget: all now."""
    if state.rate is None:
        return state, [now] * k
    start = state.next_free
    if state.hold_until is not None and (start is None or start < state.hold_until):
        start = state.hold_until
    paced = pace(start, state.rate, now, k)
    return replace(state, next_free=paced.next_free), list(paced.slots)
