"""The executor: queue message -> batch of occurrences -> claimed attempts -> actions -> history and status.

- batch.py: the queue trigger's entry point; one watchdog per message, the batch's jobs read together and
  claims taken before the second, each attempt a coroutine that fires at its second and is recorded as soon
  as its own action answered.
- attempts.py: one attempt (claim, admission, the action as a coroutine under the process's action limits,
  its slots released): the I/O shell of shared/jobstate's `decide`.
- admission.py: whether an attempt runs now, asked once at its second: the job at its second, its state and
  its collection's, its missed-run policy, its overlap turn, then its limits; Run, Wait or Skip.
- fired.py: what an attempt hands on: the `Attempt` its message carries (for jobstate) and `Fired`, an attempt
  whose action ran, for the recorder.
- persist.py: a write after an action, waited out through storage faults (`persist`).
- collection_gate.py: the collection's state (and definition) at the occurrence's second, one read shared by
  a herd.
- limits.py: the collection's maxConcurrentExecutions and targetRateLimits at an attempt (gathered.py: a
  herd's asks in one storage call); an attempt that must wait long is queued again.
- recorder.py: an attempt's outcome made durable moments after its action answered (`after_attempt`),
  written together with whatever else answered meanwhile; recording_order.py: the order of its steps, a table.
- not_run.py: the ledger entries of occurrences the executor drops.
"""

from .batch import Executor

__all__ = ["Executor"]
