"""The batch guard's protocol as a decision table: what a delivery of a batch does with each of its copies. Pure.

A batch of occurrences travels as three copies (shared/leases.py): the batch message, its *watchdog* (hidden
until just past the claims' leases: it brings the batch back when its holder dies) and its *backstop* (hidden
`backstop_after` past the batch's second: it brings the batch back should the watchdog's receive be lost too).
Its sender sends all three and the batch names the other two. `Guards` asks this table and does what it says:

- `on_open`, a delivery takes the batch up: the watchdog is *taken over* untouched on a first delivery before the
  batch's second (its sender hid it until just where this delivery's leases end, and nobody may touch it before a
  delivery holds it); else (a redelivery, whose delivery before may have renewed or deleted it, or a delivery after
  the second) it is *hidden anew*, a fresh one sent when it is gone; a batch that names none *sends* one. The
  backstop is taken over as it is, and *pushed* further only when it comes near;
- `on_renew`, at each renewal while the batch lives (leases.py: after `renew_every`, then doubling up to
  `renew_most`): the watchdog hidden anew to just past the renewed leases, the backstop pushed only when it comes
  near (side by side with the claims' renewal, not after it: a pass that renews thousands of claims while the
  storage queue is deep let watchdogs turn visible before their turn came; should the claims' renewal fail, the
  watchdog turns visible up to a renewal period after their leases, never before);
- `ON_CLOSE`, the batch ended: both copies deleted; `ON_ABANDON`, the process is going away mid-batch, or the
  delivery failed (a storage fault: the host delivers it again, but under a lossy spell that redelivery may be lost
  for the receive's ten minutes): both left to bring the batch back.

Its promises (tests/executor/test_guard_protocol.py asserts each, row by row): a live batch always holds a
watchdog, hidden no shorter than its claims' leases and turning visible just after them; nobody touches a
sender's watchdog before a delivery holds it; close deletes both copies; abandon leaves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Act(str, Enum):
    """What a guard does with one copy (its `.value` is what logs show)."""

    TAKE_OVER = "take over"  # hold the copy as its sender left it: its receipt, no queue operation
    HIDE_ANEW = "hide anew"  # hide it again just past the leases' end; send a fresh one when it is gone
    SEND = "send"  # send a copy of its own
    PUSH = "push"  # hide the backstop further; let it go when it is gone (its delivery runs the batch)
    LEAVE = "leave"  # nothing: it stays as it is (or there is none)
    DELETE = "delete"


@dataclass(frozen=True)
class Acts:
    watchdog: Act
    backstop: Act


@dataclass(frozen=True)
class Delivery:
    """What a delivery knows of its batch's copies when it opens the guard."""

    names_watchdog: bool
    first_delivery: bool  # the queue's first delivery of this message (its dequeue count is 1)
    before_second: bool  # received before the batch's (first) second
    names_backstop: bool
    backstop_near: bool  # the backstop turns visible within half `backstop_gap`


def on_open(delivery: Delivery) -> Acts:
    """The five branches of `Guards.open`: three for the watchdog, two for a named backstop."""
    if not delivery.names_watchdog:
        watchdog = Act.SEND
    elif delivery.first_delivery and delivery.before_second:
        watchdog = Act.TAKE_OVER
    else:
        watchdog = Act.HIDE_ANEW
    return Acts(watchdog, _backstop(delivery.names_backstop, delivery.backstop_near, held=Act.TAKE_OVER))


def on_renew(holds_watchdog: bool, holds_backstop: bool, backstop_near: bool) -> Acts:
    """A renewal of a live batch (after `on_open`, which always leaves it a watchdog)."""
    return Acts(Act.HIDE_ANEW if holds_watchdog else Act.LEAVE, _backstop(holds_backstop, backstop_near, Act.LEAVE))


ON_CLOSE = Acts(Act.DELETE, Act.DELETE)
ON_ABANDON = Acts(Act.LEAVE, Act.LEAVE)


def _backstop(present: bool, near: bool, held: Act) -> Act:
    if not present:
        return Act.LEAVE
    return Act.PUSH if near else held
