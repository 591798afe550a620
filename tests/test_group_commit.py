"""Group commit (shared/group_commit.py): the callers that come for a key while its write is in flight share the next
write, done once for all of them in arrival order; an error reaches its group only; keys do not wait on each other."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from shared.group_commit import GroupCommit

WITHIN = 10.0  # seconds a test waits for a thread it started, at most


class _Held:
    """A write that records the group sizes it was called for and holds until released."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, n: int) -> str:
        self.sizes.append(n)
        self.entered.set()
        assert self.release.wait(WITHIN)
        return f"wrote {n}"


def _waiting(groups: GroupCommit[str, str], key: str, callers: int) -> bool:
    """Whether `callers` have joined the key's gathering group (read under the group commit's own lock)."""
    with groups._changed:
        state = groups._keys.get(key)
        return state is not None and state.gathering is not None and state.gathering.size == callers


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WITHIN
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_callers_that_come_during_a_write_share_the_next_one_in_arrival_order() -> None:
    groups: GroupCommit[str, str] = GroupCommit()
    first, second = _Held(), _Held()
    with ThreadPoolExecutor(6) as pool:
        leading = pool.submit(groups.share, "c", first)
        assert first.entered.wait(WITHIN)
        later: list[Future[tuple[int, str]]] = []
        for n in range(5):  # one at a time, so that arrival order is known
            later.append(pool.submit(groups.share, "c", second))
            _until(lambda n=n: _waiting(groups, "c", n + 1))
        assert second.sizes == []  # the next group waits for the write in flight
        first.release.set()
        second.release.set()
        assert leading.result(WITHIN) == (0, "wrote 1")
        assert [f.result(WITHIN) for f in later] == [(place, "wrote 5") for place in range(5)]
    assert (first.sizes, second.sizes) == ([1], [5])
    assert groups._keys == {}  # nothing kept once nobody waits


def test_an_error_reaches_every_caller_of_its_group_and_not_the_next() -> None:
    groups: GroupCommit[str, str] = GroupCommit()
    first = _Held()
    sizes: list[int] = []

    def failing(n: int) -> str:
        sizes.append(n)
        raise OSError("storage unavailable")

    with ThreadPoolExecutor(4) as pool:
        leading = pool.submit(groups.share, "c", first)
        assert first.entered.wait(WITHIN)
        failed = [pool.submit(groups.share, "c", failing) for _ in range(2)]
        _until(lambda: _waiting(groups, "c", 2))
        first.release.set()
        assert leading.result(WITHIN) == (0, "wrote 1")
        for future in failed:
            with pytest.raises(OSError, match="storage unavailable"):
                future.result(WITHIN)
    assert sizes == [2]  # one write for the group of two, which failed for both
    assert groups.share("c", lambda n: f"wrote {n}") == (0, "wrote 1")  # the next group writes afresh


def test_a_key_does_not_wait_for_another_keys_write() -> None:
    groups: GroupCommit[str, str] = GroupCommit()
    held = _Held()
    with ThreadPoolExecutor(2) as pool:
        leading = pool.submit(groups.share, "a", held)
        assert held.entered.wait(WITHIN)
        assert pool.submit(groups.share, "b", lambda n: f"wrote {n}").result(WITHIN) == (0, "wrote 1")
        assert not leading.done()  # "a" is still being written
        held.release.set()
        assert leading.result(WITHIN) == (0, "wrote 1")
