"""The executor: queue message -> batch of occurrences -> claimed attempts -> actions -> history and status.

- batch.py: the queue trigger's entry point; one watchdog per message, claims before the second, firing at it.
- attempts.py: one attempt (claim, runnable checks, the action, its record): the I/O shell of
  shared/jobstate's `may_run`, `decide` and `after_attempt`.
"""

from .batch import Executor

__all__ = ["Executor"]
