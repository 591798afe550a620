"""Several instances of the app in one test process, for the cross-instance limits: each `Instance` is a runtime of
its own (its own Store and Executor on the same Azurite) whose queue trigger is played by a thread that hands
every visible occurrence message to its executor, each message on a thread of its own, as the Functions host
starts every message at once. Not fixtures: helpers the limit tests share."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from shared.occurrence import OccurrenceBatch
from shared.runtime import Runtime
from shared.settings import Settings


@dataclass
class Instance:
    runtime: Runtime
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    failures: list[BaseException] = field(default_factory=list)

    def start(self) -> None:
        self._spawn(self._poll)

    def run(self, batch: OccurrenceBatch) -> None:
        """Hand `batch` to this instance's executor at once (as a delivery would), on a thread of its own."""
        self._spawn(lambda: self.runtime.executor.run(batch))

    def _spawn(self, target: object) -> None:
        def guarded() -> None:
            try:
                target()  # type: ignore[operator]
            except BaseException as error:  # the test asserts none happened
                self.failures.append(error)

        thread = threading.Thread(target=guarded, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _poll(self) -> None:
        queue = self.runtime.store.queue.client
        while not self.stop.is_set():
            messages = list(queue.receive_messages(max_messages=32, visibility_timeout=120))
            for message in messages:

                def handle(message: object = message) -> None:
                    self.runtime.executor.handle(message.content, message.id, message.dequeue_count)  # type: ignore[attr-defined]
                    queue.delete_message(message)

                self._spawn(handle)
            if not messages:
                self.stop.wait(0.1)


@contextmanager
def running(runtimes: list[Runtime], ended: Callable[[list[Instance]], None]) -> Iterator[list[Instance]]:
    """An instance polling the occurrence queue per runtime; told to stop at the end, then `ended` awaits their
    work (joined in real time, or while a manual clock moves)."""
    started = [Instance(runtime) for runtime in runtimes]
    for instance in started:
        instance.start()
    try:
        yield started
    finally:
        for instance in started:
            instance.stop.set()
        ended(started)


def _joined(started: list[Instance]) -> None:
    for instance in started:
        for thread in list(instance.threads):
            thread.join(timeout=60)
        instance.runtime.close()


@contextmanager
def instances(settings: Settings, count: int) -> Iterator[list[Instance]]:
    """`count` instances polling the occurrence queue; stopped (and their work awaited) at the end."""
    with running([Runtime.create(settings) for _ in range(count)], _joined) as started:
        yield started


def failures(running: Iterable[Instance]) -> list[BaseException]:
    return [failure for instance in running for failure in instance.failures]
