"""The batch guard's protocol (shared/guard_protocol.py): every row of its decision table, written out here by hand,
and the promises the table keeps: a live batch always holds a watchdog, hidden no shorter than its claims' leases
and turning visible just after them; nobody touches a sender's watchdog before a delivery holds it; close deletes
both copies; abandon leaves both. Pure: no storage, no clock."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from shared.guard_protocol import ON_ABANDON, ON_CLOSE, Act, Acts, Delivery, on_open, on_renew
from shared.keys import JobKey
from shared.occurrence import OccurrenceBatch, OccurrenceMessage
from shared.store.queues import watchdog_delay
from shared.timings import Timings

BOOLS = (False, True)
DELIVERIES = [Delivery(*row) for row in itertools.product(BOOLS, repeat=5)]

# (names its watchdog, first delivery, before its second) -> what the delivery does with the watchdog
OPEN_WATCHDOG = {
    (False, False, False): Act.SEND,
    (False, False, True): Act.SEND,
    (False, True, False): Act.SEND,
    (False, True, True): Act.SEND,
    (True, False, False): Act.HIDE_ANEW,  # a redelivery after the second
    (True, False, True): Act.HIDE_ANEW,  # a redelivery: the delivery before may have renewed or deleted it
    (True, True, False): Act.HIDE_ANEW,  # a first delivery after the second: its sender's hiding ends too soon
    (True, True, True): Act.TAKE_OVER,
}
# (names its backstop, backstop near) -> what the delivery does with the backstop
OPEN_BACKSTOP = {
    (False, False): Act.LEAVE,
    (False, True): Act.LEAVE,
    (True, False): Act.TAKE_OVER,
    (True, True): Act.PUSH,
}
# (holds a watchdog, holds a backstop, backstop near) -> what a renewal does with each
RENEW = {
    (False, False, False): Acts(Act.LEAVE, Act.LEAVE),
    (False, False, True): Acts(Act.LEAVE, Act.LEAVE),
    (False, True, False): Acts(Act.LEAVE, Act.LEAVE),
    (False, True, True): Acts(Act.LEAVE, Act.PUSH),
    (True, False, False): Acts(Act.HIDE_ANEW, Act.LEAVE),
    (True, False, True): Acts(Act.HIDE_ANEW, Act.LEAVE),
    (True, True, False): Acts(Act.HIDE_ANEW, Act.LEAVE),
    (True, True, True): Acts(Act.HIDE_ANEW, Act.PUSH),
}
HOLDS_A_WATCHDOG = {Act.TAKE_OVER, Act.HIDE_ANEW, Act.SEND}
TOUCHES = {Act.HIDE_ANEW, Act.PUSH, Act.DELETE}  # queue operations on a copy someone else sent


@pytest.mark.parametrize("delivery", DELIVERIES, ids=repr)
def test_each_delivery_does_with_each_copy_what_its_row_says(delivery: Delivery) -> None:
    watchdog = OPEN_WATCHDOG[delivery.names_watchdog, delivery.first_delivery, delivery.before_second]
    backstop = OPEN_BACKSTOP[delivery.names_backstop, delivery.backstop_near]
    assert on_open(delivery) == Acts(watchdog, backstop)


@pytest.mark.parametrize("row", sorted(RENEW))
def test_each_renewal_does_with_each_copy_what_its_row_says(row: tuple[bool, bool, bool]) -> None:
    assert on_renew(*row) == RENEW[row]


def test_a_delivery_always_leaves_its_batch_holding_a_watchdog_and_each_renewal_hides_it_anew() -> None:
    for delivery in DELIVERIES:
        acts = on_open(delivery)
        assert acts.watchdog in HOLDS_A_WATCHDOG, delivery
        assert (acts.watchdog == Act.SEND) == (not delivery.names_watchdog), delivery  # one watchdog, never two
    for backstop, near in itertools.product(BOOLS, BOOLS):
        assert on_renew(True, backstop, near).watchdog == Act.HIDE_ANEW


@pytest.mark.parametrize("delivery", DELIVERIES, ids=repr)
def test_the_watchdog_a_delivery_holds_stays_hidden_while_its_leases_hold_and_shows_just_after(
    delivery: Delivery,
) -> None:
    """Where the claims' leases end (`claim_lease` past the batch's second, or past now) the watchdog still hides;
    it turns visible within `watchdog_margin` after, so a dead holder's batch is taken over at once."""
    timings = Timings()
    second = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    batch = OccurrenceBatch((OccurrenceMessage(JobKey("s", "r", "c", "j"), second, second),))
    now = second - timedelta(seconds=3) if delivery.before_second else second + timedelta(seconds=5)
    sent = second - timedelta(seconds=30)  # its sender queued the batch before its second
    act = on_open(delivery).watchdog
    if act == Act.TAKE_OVER:  # as its sender hid it
        visible = sent + timedelta(seconds=watchdog_delay(batch, sent, timings))
    else:  # hidden anew, or sent, now
        visible = now + timedelta(seconds=watchdog_delay(batch, now, timings))
    leases_end = max(second, now) + timings.claim_lease
    assert leases_end < visible <= leases_end + timings.watchdog_margin, act


def test_nobody_touches_a_senders_watchdog_before_a_delivery_holds_it() -> None:
    """The first delivery before the batch's second is the first to hold the watchdog its sender hid: it takes it
    over as it is; only a delivery that may follow one that held it (a redelivery), or one that comes too late for
    the sender's hiding (after the second), hides it anew."""
    for delivery in DELIVERIES:
        if delivery.names_watchdog and delivery.first_delivery and delivery.before_second:
            assert on_open(delivery).watchdog not in TOUCHES, delivery
            assert on_open(delivery).watchdog == Act.TAKE_OVER
        if delivery.names_backstop and not delivery.backstop_near:
            assert on_open(delivery).backstop not in TOUCHES, delivery


def test_close_deletes_both_copies_and_abandon_leaves_both() -> None:
    assert Acts(Act.DELETE, Act.DELETE) == ON_CLOSE
    assert Acts(Act.LEAVE, Act.LEAVE) == ON_ABANDON
