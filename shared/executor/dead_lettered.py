"""The dead letter an attempt leaves (jobstate/dead_letter.py's rule), and the recorder's history transactions
sized for it.

The recorder (recorder.py) writes an attempt's dead-letter row in the entity-group transaction of its history row
(store/history.py `add_group`), so a crash records both or neither. An attempt writes two rows (its history row,
its occurrence's ledger row), three with a dead letter; `history_groups` fills each transaction up to
MAX_OPERATIONS rows, so attempts that leave none are grouped exactly as before (ATTEMPTS_PER_GROUP of them: no
request more per execution), and an attempt is never split from its dead letter.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from ..jobstate.dead_letter import Capture, capture
from ..store.dead_letters import DeadLetterState, row
from ..store.history import ATTEMPTS_PER_GROUP
from ..store.tables import Entity, grouped
from ..store.transaction import MAX_OPERATIONS
from .fired import Fired

_T = TypeVar("_T")
_ROWS = MAX_OPERATIONS // ATTEMPTS_PER_GROUP  # an attempt's rows without a dead letter


def dead_letter_row(fired: Fired) -> Entity | None:
    """The dead-letter row the attempt writes beside its history row; None for nearly every attempt."""
    found = capture(fired.outcome.kind, fired.succeeded, fired.message.replay > 0)
    if found == Capture.NONE:
        return None
    state = DeadLetterState.DEAD_LETTERED if found == Capture.DEAD else DeadLetterState.RESOLVED
    return row(fired.message, fired.history, state)


def history_groups(
    items: list[_T], collection: Callable[[_T], Hashable], fired: Callable[[_T], Fired]
) -> list[list[_T]]:
    """`items` by collection, in transactions of at most MAX_OPERATIONS rows, dead letters counted."""
    groups: list[list[_T]] = []
    for same in grouped(items, collection):
        rows = MAX_OPERATIONS  # the first item opens a group
        for item in same:
            weight = _ROWS + (dead_letter_row(fired(item)) is not None)
            if rows + weight > MAX_OPERATIONS:
                groups.append([])
                rows = 0
            groups[-1].append(item)
            rows += weight
    return groups
