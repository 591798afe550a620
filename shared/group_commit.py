"""Group commit: the callers of one process that race to write one row share its writes.

Racing writers of one row under its ETag let one of them through per round trip, and the others read and try again
(a create's place in its collection's count: with 8 creates at once, bench/near_term.py counted each create reading
and writing the collection's row about three times). Here, while one write of a key is in flight, the callers that
come for the same key gather into the next write, which the first of them does for all once the one in flight has
ended: in a process at most one write of a key is in flight, and each round trip serves every caller that waited for
it. Other processes still race for the row; the ETag loop inside `write` settles those.

Contract: `share(key, write)` calls `write(n)` once for a group of n callers (n >= 1, arrival order), in the thread
of the group's first caller, and answers each caller its place in the group (0 .. n - 1) and what `write` returned;
what `write` raised reaches every caller of the group, and no later group.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")


class _Group(Generic[R]):
    def __init__(self) -> None:
        self.size = 0
        self.done = threading.Event()
        self.answer: R | None = None
        self.error: BaseException | None = None


class _Key(Generic[R]):
    def __init__(self) -> None:
        self.writing = False
        self.gathering: _Group[R] | None = None  # the group that the next callers join


class GroupCommit(Generic[K, R]):
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._keys: dict[K, _Key[R]] = {}

    def share(self, key: K, write: Callable[[int], R]) -> tuple[int, R]:
        """Join the key's gathering group (or start one); (this caller's place in it, the group's answer)."""
        with self._changed:
            state = self._keys.setdefault(key, _Key())
            group = state.gathering
            if group is None:
                group = state.gathering = _Group()
            place = group.size
            group.size += 1
            if place == 0:
                while state.writing:  # the group gathers until the write in flight has ended
                    self._changed.wait()
                state.writing = True
                state.gathering = None  # closed: its size is final, later callers start the next group
        if place == 0:
            self._write(key, state, group, write)
        else:
            group.done.wait()
        if group.error is not None:
            raise group.error  # the same error for every caller of the group, as a future's result() does
        return place, group.answer  # type: ignore[return-value]  # set whenever no error was

    def _write(self, key: K, state: _Key[R], group: _Group[R], write: Callable[[int], R]) -> None:
        try:
            group.answer = write(group.size)
        except BaseException as error:  # every caller of the group is told, then it goes on up in each
            group.error = error
        finally:
            with self._changed:
                state.writing = False
                if state.gathering is None:
                    del self._keys[key]  # nobody waits: a key seen once keeps nothing
                self._changed.notify_all()
            group.done.set()
