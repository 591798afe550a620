"""The recorder's order (shared/executor/recording_order.py): the table keeps its promises (history and follow-up
before the job write, a release only after it, nothing after done or failed), a move out of order fails its
attempt loudly, and the real recorder (on the memory store, through the executor) takes a retry's follow-up and a
BufferOne release along paths of the table, in that order."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.executor import overlap_marker
from shared.executor.overlap_marker import ref_of
from shared.executor.recording_order import ENDS, MOVES, OutOfOrder, Recording, Step, allows
from shared.jobstate import marker_until
from shared.jobstate.overlap import Turn
from shared.keys import JobKey
from shared.model import JobExecutionStatus
from shared.occurrence import OccurrenceBatch, OccurrenceMessage, Trigger
from shared.runtime import Runtime
from shared.store.memory import MemoryStorage
from shared.store.storage import Storage
from tests.executor.peers.servers import Hit, Server, serve
from tests.executor.support import JC, RG, SUB, fixed, history, http, job_status, make_collection, put_job


def paths(start: Step = Step.ANSWERED) -> Iterator[list[Step]]:
    """Every path the table allows from `start` to an end."""
    if start in ENDS:
        yield [start]
    for step in sorted(MOVES[start], key=list(Step).index):
        for rest in paths(step):
            yield [start, *rest]


TO_DONE = [path for path in paths() if path[-1] is Step.DONE]


def test_the_table_leads_to_done_only_through_history_then_job_with_follow_up_and_release_in_their_places() -> None:
    A, H, F, J = Step.ANSWERED, Step.HISTORY_WRITTEN, Step.FOLLOW_UP_SENT, Step.JOB_WRITTEN
    R, D = Step.RELEASED, Step.DONE
    assert sorted(TO_DONE) == sorted([[A, H, J, D], [A, H, F, J, D], [A, H, J, R, D], [A, H, F, J, R, D]])
    for path in TO_DONE:
        assert path.index(H) < path.index(J), path
        if F in path:
            assert path.index(F) < path.index(J), path


def test_a_release_comes_only_after_the_job_write_and_nothing_after_done_or_failed() -> None:
    everything = list(paths())
    assert everything and all(allows(path) for path in everything)
    for path in everything:
        if Step.RELEASED in path:
            assert Step.JOB_WRITTEN in path[: path.index(Step.RELEASED)], path
        assert path[-1] in ENDS and not any(step in ENDS for step in path[:-1]), path
    assert {Step.DONE, Step.FAILED} == ENDS
    assert all(Step.FAILED in MOVES[step] for step in Step if step not in ENDS)  # any step may fail


def test_a_recording_moved_to_done_hands_its_path_to_its_watcher_then_ends_its_future() -> None:
    seen: list[tuple[list[Step], bool]] = []
    recording = Recording("a1", lambda r: seen.append((list(r.path), r.future.done())))
    for step in (Step.HISTORY_WRITTEN, Step.FOLLOW_UP_SENT, Step.JOB_WRITTEN, Step.DONE):
        assert recording.move(step)
    assert recording.future.result(0) is None
    assert seen == [([Step.ANSWERED, Step.HISTORY_WRITTEN, Step.FOLLOW_UP_SENT, Step.JOB_WRITTEN, Step.DONE], False)]
    recording.fail(RuntimeError("late"))  # after done: nothing
    assert recording.path[-1] is Step.DONE and recording.future.exception(0) is None


def test_a_move_out_of_order_is_logged_and_fails_the_attempt_and_nothing_moves_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recording = Recording("a2")
    with caplog.at_level(logging.ERROR, logger="shared.executor.recording_order"):
        assert not recording.move(Step.JOB_WRITTEN)  # the job before its history
    assert recording.path == [Step.ANSWERED, Step.FAILED]
    assert isinstance(recording.future.exception(0), OutOfOrder)
    assert "a2" in caplog.text and "job written" in caplog.text
    assert not recording.move(Step.HISTORY_WRITTEN)
    assert recording.path == [Step.ANSWERED, Step.FAILED]


# The real recorder, through the executor, on the memory store.

BUFFERED = JobKey(SUB, RG, JC, "buffered")
RETRIED = JobKey(SUB, RG, JC, "retried")


@pytest.fixture
def storage(memory_storage: MemoryStorage) -> Storage | None:
    return memory_storage


@pytest.fixture
def target() -> Iterator[Server]:
    def respond(hit: Hit) -> tuple[int, dict[str, str], bytes]:
        return (500, {}, b"no") if hit.path.endswith("/retried") else (200, {}, b"ok")

    server = serve(respond)
    yield server
    server.close()


def test_the_recorder_takes_a_retry_and_a_buffered_release_along_paths_of_the_table(
    runtime: Runtime, target: Server
) -> None:
    make_collection(runtime)
    T = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    later = (T + timedelta(days=1)).isoformat()  # the test queues the occurrences itself
    put_job(runtime, "buffered", {"startTime": later, "overlapPolicy": "BufferOne", "action": http(f"{target.url}/b")})
    put_job(runtime, "retried", {"startTime": later, "action": http(f"{target.url}/retried")}, retry=fixed(60, 1))
    generation = job_status(runtime, "buffered").generation
    running = OccurrenceMessage(BUFFERED, T, T, Trigger.RUN_NOW, generation=generation)
    waiting = OccurrenceMessage(BUFFERED, T + timedelta(seconds=1), T, Trigger.RUN_NOW, generation=generation)
    retried = OccurrenceMessage(RETRIED, T, T, Trigger.RUN_NOW, generation=job_status(runtime, "retried").generation)
    decided, _ = overlap_marker.begin(
        runtime.store.jobs, BUFFERED, ref_of(running), T, marker_until(T, runtime.settings.timings.running_lease)
    )
    assert decided.turn == Turn.RUN  # `running` holds the job's place; `waiting` comes and waits for it
    runtime.executor.run(waiting)
    marker = job_status(runtime, "buffered").overlap
    assert marker.waiting is not None and marker.waiting.ref.execution_id == waiting.execution_id

    recorded: dict[str, list[Step]] = {}
    lock = threading.Lock()

    def watch(recording: Recording) -> None:
        with lock:
            recorded[recording.name] = list(recording.path)

    runtime.executor.recorder.watch(watch)
    runtime.executor.run(OccurrenceBatch((running, retried)))  # both answer at once: one window

    assert recorded == {
        running.claim_id: [Step.ANSWERED, Step.HISTORY_WRITTEN, Step.JOB_WRITTEN, Step.RELEASED, Step.DONE],
        retried.claim_id: [Step.ANSWERED, Step.HISTORY_WRITTEN, Step.FOLLOW_UP_SENT, Step.JOB_WRITTEN, Step.DONE],
    }
    assert all(allows(path) for path in recorded.values())
    # What the steps say landed: the release let the waiting occurrence run next, the retry counted a failure.
    marker = job_status(runtime, "buffered").overlap
    assert [r.ref.execution_id for r in marker.running] == [waiting.execution_id] and marker.waiting is None
    assert [e.status for e in history(runtime, "retried")] == [JobExecutionStatus.FAILED]
    assert job_status(runtime, "retried").failure_count == 1
