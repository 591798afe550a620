"""The destinations that push back or fail (issue 40): counts the executor hands over (executor/destinations.py).

- `destination_deferred(destination, why)`: an attempt to `destination` was deferred instead of sent, `why`
  "PushBack" (its budget or the hold of a 429 or 503) or "CircuitOpen" (held while its circuit is open). Counter
  `scheduler.destination.deferred`, attributes `destination` and `reason`.
- `circuit_changed(destination, circuit)`: its circuit became `circuit` ("Closed", "Open", "HalfOpen": jobstate/
  circuit.py's `Circuit` values). Counter `scheduler.destination.circuit`, attributes `destination` and `circuit`.

`destination` is jobstate/pushback.py's `destination_key` (a host, `queue:<account>`, `servicebus:<namespace>`): one
series per destination that ever pushed back or failed, as few as the targets in trouble. Counting never breaks
what is counted (a failure here is logged); with telemetry off nothing is kept.
"""

from __future__ import annotations

from typing import Literal

from .occurrences import REASON, _quiet
from .providers import active

DESTINATION = "destination"
CIRCUIT = "circuit"
Deferred = Literal["PushBack", "CircuitOpen"]


@_quiet
def destination_deferred(destination: str, why: Deferred) -> None:
    current = active()
    if current.enabled:
        current.instruments.destination_deferred.add(1, {DESTINATION: destination, REASON: why})


@_quiet
def circuit_changed(destination: str, circuit: str) -> None:
    current = active()
    if current.enabled:
        current.instruments.destination_circuit.add(1, {DESTINATION: destination, CIRCUIT: circuit})
