"""A lane: a bounded share of an executor (the process's pool, or another lane), in the order calls came.

Contract (shared/threads.py builds every lane, from its LANES table): a `Lane` is a `concurrent.futures.Executor`
that runs at most `size` of its calls at once on `runs_on`; the others wait in its own FIFO and start in the order
they were submitted. `submit` never blocks, as a pool of its own would not, so `loop.run_in_executor(lane, ...)` and
`lane.map(...)` work as on a pool. A thread taken for a call keeps taking the lane's next waiting call, and is given
back when none waits. `share(size)` is a lane of at most `size` calls at once over this one (one caller's bound).
`shutdown(cancel_futures=True)` cancels what waits, in this lane and in every share of it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class _Call:
    """One submitted call and its future."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.future: Future[Any] = Future()
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as error:  # the caller's to see, as a pool's future holds it
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


class Lane(Executor):
    """At most `size` calls at once on `runs_on` (the pool, or the lane a share is of); the rest wait here, in
    order. A lane's admitted calls run one after another on the threads it holds: a thread taken for a call keeps
    taking the lane's next waiting call, and is given back when none waits."""

    def __init__(self, name: str, size: int, runs_on: Executor) -> None:
        if size < 1:
            raise ValueError(f"lane {name}: size must be at least 1")
        self.name = name
        self.size = size
        self._runs_on = runs_on
        self._waiting: deque[_Call] = deque()
        self._running = 0
        self._closed = False
        self._dropping = False  # closed with its waiting calls cancelled
        self._idle = threading.Condition()

    @property
    def closed(self) -> bool:  # no call is accepted: this lane, or the lane a share is of, was shut down
        return self._closed or (isinstance(self._runs_on, Lane) and self._runs_on.closed)

    @property
    def dropping(self) -> bool:  # waiting calls are cancelled, not run
        return self._dropping or (isinstance(self._runs_on, Lane) and self._runs_on.dropping)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        call = _Call(fn, args, kwargs)
        with self._idle:
            if self.closed:
                raise RuntimeError(f"lane {self.name} is closed")
            if self._running >= self.size:
                self._waiting.append(call)
                return call.future
            self._running += 1
        try:
            taken = self._runs_on.submit(self._drain, call)
        except BaseException:
            self._give_back()
            raise
        # A share's call cancelled while it waited in its lane (closed): this one never runs either.
        taken.add_done_callback(lambda future: self._give_back(lost=call) if future.cancelled() else None)
        return call.future

    def share(self, size: int) -> Lane:
        """A lane of at most `size` calls at once that runs them as calls of this one (one caller's bound)."""
        return Lane(self.name, size, self)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No call is accepted any more; `cancel_futures`: the waiting ones are cancelled, else they still run;
        `wait`: returns once every call admitted or waiting has ended."""
        with self._idle:
            self._closed = True
            self._dropping = self._dropping or cancel_futures
            dropped = self._take_waiting() if cancel_futures else []
        for waiting in dropped:
            waiting.future.cancel()
        if wait:
            with self._idle:
                self._idle.wait_for(lambda: self._running == 0 and not self._waiting)

    def _drain(self, call: _Call | None) -> None:
        while call is not None:
            call.run()
            call = self._next()

    def _next(self) -> _Call | None:
        """The next waiting call to run on this thread, or None: the thread is given back (in one step with the
        look at the FIFO, so a call queued meanwhile is never left without a thread)."""
        with self._idle:
            dropped = self._take_waiting() if self.dropping else []
            if self._waiting:
                return self._waiting.popleft()
            self._running -= 1
            self._idle.notify_all()
        for waiting in dropped:
            waiting.future.cancel()
        return None

    def _give_back(self, lost: _Call | None = None) -> None:
        """A thread given back. `lost`: a call whose thread will not come (the lane a share is of dropped it);
        nor will the share's other waiting calls run."""
        with self._idle:
            dropped = [lost, *self._take_waiting()] if lost is not None else []
            self._running -= 1
            self._idle.notify_all()
        for waiting in dropped:
            waiting.future.cancel()

    def _take_waiting(self) -> list[_Call]:
        waiting = list(self._waiting)
        self._waiting.clear()
        self._idle.notify_all()
        return waiting
