"""The executor: queue message -> batch of occurrences -> claimed attempts -> actions -> history and status.

- batch.py: the queue trigger's entry point; one watchdog per message, the batch's jobs read together and
  claims taken before the second, each attempt a coroutine that fires at its second and is recorded as soon
  as its own action answered.
- attempts.py: one attempt (claim, runnable checks, the action as a coroutine under the process's action
  limits): the I/O shell of shared/jobstate's `may_run` and `decide`.
- fired.py: what an attempt hands on: the `Attempt` its message carries (for jobstate) and `Fired`, an attempt
  whose action ran, for the recorder.
- persist.py: a write after an action, waited out through storage faults (`persist`).
- collection_gate.py: the collection's state (and definition) at the occurrence's second, one read shared by
  a herd.
- limits.py: the collection's maxConcurrentExecutions and targetRateLimits at an attempt (gathered.py: a
  herd's asks in one storage call); an attempt that must wait long is queued again.
- recorder.py: an attempt's outcome made durable moments after its action answered (`after_attempt`),
  written together with whatever else answered meanwhile.
- not_run.py: the ledger entries of occurrences the executor drops.
- missed_turn.py: an occurrence queued before an outage that comes missed, decided by its job's missed-run
  policy (jobstate/late.py), as the dispatcher decides the ones it finds missed.
"""

from .batch import Executor

__all__ = ["Executor"]
