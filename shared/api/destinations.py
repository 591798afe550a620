"""The destinations that push back or fail (newer api-version only; issue 40): what the executor holds against each
(jobstate/pushback.py's budget and hold, jobstate/circuit.py's circuit), read from their rows (store/destinations.py).

GET /subscriptions/{s}/providers/Microsoft.Scheduler/destinations answers 200 `{value, asOf}` (`asOf`: now), one
item per destination by name: `destination` (pushback.py's `destination_key`), `circuit` (Closed|Open|HalfOpen),
`failures` (in a row), `failingSince`, `nextProbe` (while the circuit is not Closed: no request goes before it but
the probe's), `budget` (requests a second while pushed back, else null), `holdUntil` (the latest Retry-After) and
`lastPushBack` `{status, at}`. 2016-03-01 refuses it (400 naming the version), as every newer operation.

Contracts:
- Destinations are the deployment's, not the subscription's: every job of every subscription shares one row per
  destination, so the list is the same in every subscription. Who may read the subscription's jobs may list them
  (access.py); a caller who may read only some collections is refused (a deployment-wide list cannot be cut down
  to them).
- Each row is shown as the executor would see it now: its budget widened or dropped after quiet periods
  (pushback.py's `widened`, the same timings). A row holding nothing any more (`clear`) whose last change is older
  than `pressure_forget` (or unknown) is left out: a destination that recovered long ago.
- An unreadable property reads as absent (store/destinations.py): the row is listed with what is left.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ..jobstate.circuit import circuit_of
from ..jobstate.pushback import DestinationState, widened
from ..model import format_utc
from ..model.base import WireModel
from ..timings import Timings
from .common import require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .paths import subscription_id

if TYPE_CHECKING:
    from ..runtime import Runtime


class DestinationPushBack(WireModel):
    status: int = Field(description="429 or 503.")
    at: datetime


class DestinationStatus(WireModel):
    destination: str = Field(
        description="Where the requests go: an Http host (with its port when the uri names one), "
        "`servicebus:<namespace>`, `queue:<account>`."
    )
    circuit: Literal["Closed", "Open", "HalfOpen"] = Field(
        description="Open: no request goes but one probe per probe period. HalfOpen: a probe is under way."
    )
    failures: int = Field(description="Failures in a row (timeouts, refused connections, 5xx other than 503).")
    failing_since: datetime | None = Field(alias="failingSince", description="The first of those failures.")
    next_probe: datetime | None = Field(
        alias="nextProbe", description="While the circuit is not Closed: the earliest instant of the next probe."
    )
    budget: float | None = Field(description="Requests a second every job may send it together while pushed back.")
    hold_until: datetime | None = Field(alias="holdUntil", description="No request before this (Retry-After).")
    last_push_back: DestinationPushBack | None = Field(alias="lastPushBack", description="Its latest 429 or 503.")


class DestinationListResult(WireModel):
    """The destinations the scheduler holds back (GET .../providers/Microsoft.Scheduler/destinations)."""

    value: list[DestinationStatus] = Field(description="By destination; the deployment's, every subscription's.")
    as_of: datetime = Field(alias="asOf", description="Now: the instant the states are shown at.")


def _utc(instant: datetime | None) -> str | None:
    return format_utc(instant) if instant is not None else None


def _last_change(state: DestinationState) -> datetime | None:
    instants = (state.pushed_at, state.widened_at, state.failed_at, state.failing_since, state.hold_until)
    known = [instant for instant in instants if instant is not None]
    return max(known) if known else None


def shown(state: DestinationState, now: datetime, timings: Timings) -> DestinationState | None:
    """The state as the executor sees it now; None when it is not worth listing (see the module's contract)."""
    state = widened(state, now, timings.pressure_quiet, timings.pressure_forget)
    if state.clear:
        changed = _last_change(state)
        if changed is None or now - changed > timings.pressure_forget:
            return None
    return state


def destination_item(destination: str, state: DestinationState, now: datetime) -> dict[str, Any]:
    pushed = state.pushed_at is not None and state.last_status is not None
    return {
        "destination": destination,
        "circuit": circuit_of(state, now).value,
        "failures": state.failures,
        "failingSince": _utc(state.failing_since),
        "nextProbe": _utc(state.open_until),
        "budget": state.rate,
        "holdUntil": _utc(state.hold_until),
        "lastPushBack": {"status": state.last_status, "at": _utc(state.pushed_at)} if pushed else None,
    }


def list_destinations(rt: Runtime, request: ApiRequest) -> ApiResponse:
    require_api_version(request)
    require_newer(request, "The destinations list")
    subscription_id(request)  # a malformed name is a 400 here too, though the list is every subscription's
    now = rt.clock.now()
    rows = rt.store.destinations.all() if rt.store.destinations is not None else []
    items = []
    for destination, stored in rows:
        state = shown(stored, now, rt.store.timings)
        if state is not None:
            items.append(destination_item(destination, state, now))
    return ApiResponse(200, {"value": items, "asOf": format_utc(now)})
