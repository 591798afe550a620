"""Two storage round trips side by side, for steps of one request that do not depend on each other.

A request's round trips dominate its latency (bench/api.py); the reads of a job and of its collection,
or a create's count reservation and its due entry, need not wait for each other. The runtime's lifecycle lane
(shared/threads.py) serves every request, so no thread is started per call, and each call runs in a copy of the
caller's context (its trace span stays the parent of the storage calls).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TypeVar

from ..threads import LIFECYCLE, Threads

A = TypeVar("A")
B = TypeVar("B")


def side_by_side(threads: Threads, first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Run `first` on the lifecycle lane of `threads` and `second` here; both have finished when this returns or
    raises.

    When both fail, `first`'s exception wins, so the refusal a caller sees does not depend on timing.
    """
    future = threads.lane(LIFECYCLE).submit(contextvars.copy_context().run, first)
    try:
        b = second()
    except BaseException as exc:
        error = future.exception()  # waits for the first
        if error is not None:
            raise error from exc
        raise
    return future.result(), b
