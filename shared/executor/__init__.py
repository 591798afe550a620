"""The executor: queue message -> batch of occurrences -> claimed attempts -> actions -> history and status.

- batch.py: the queue trigger's entry point; one watchdog per message, claims before the second, firing at it.
- attempts.py: one attempt (claim, runnable checks, the action, its record).
- decide.py: the pure decision of what follows an attempt (`decide` -> `AttemptOutcome`).
"""

from .batch import Executor
from .decide import AttemptOutcome, Outcome, decide

__all__ = ["AttemptOutcome", "Executor", "Outcome", "decide"]
