"""`scheduler destinations`: the destinations the scheduler holds back, the deployment's (newer api-version:
GET /subscriptions/{s}/providers/Microsoft.Scheduler/destinations, shared/api/destinations.py says what each
member means). A table, one row per destination: its circuit (Open: no request goes but the probe's), failures
in a row, next probe, budget (requests a second while pushed back), hold until; `-o json` prints the answer whole.
`scheduler doctor` warns of the same rows (doctor_destinations.py).
"""

from __future__ import annotations

from typing import Any

import typer

from .context import guarded, options
from .occurrences import NEWER
from .output import emit_json, emit_message, emit_table
from .times import labelled

EXAMPLE = "Example: scheduler destinations -s <subscription>"


def destinations_path(subscription: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Scheduler/destinations"


def budget(item: dict[str, Any]) -> str:
    rate = item.get("budget")
    return "-" if rate is None else f"{float(rate):.3g}/s"


def _row(item: dict[str, Any], zone: str | None) -> list[str]:
    return [
        str(item.get("destination", "")),
        str(item.get("circuit", "")),
        str(item.get("failures", 0)),
        labelled(item.get("nextProbe"), zone),
        budget(item),
        labelled(item.get("holdUntil"), zone),
    ]


@guarded
def destinations(ctx: typer.Context) -> None:
    """The destinations that push back (429, 503: a budget and a hold) or keep failing (an Open circuit), the
    deployment's: every subscription's jobs share them."""
    opts = options(ctx)
    answer = opts.client().call("GET", destinations_path(opts.require_subscription()), query=NEWER) or {}
    if opts.json:
        emit_json(answer)
        return
    items = answer.get("value") or []
    if not items:
        emit_message("No destination pushes back or fails.")
        return
    zone = opts.zone(None)
    columns = ["Destination", "Circuit", "Failures", "Next probe", "Budget", "Hold until"]
    emit_table(
        f"Destinations as of {labelled(answer.get('asOf'), zone)}", columns, [_row(i, zone) for i in items], (0,)
    )
