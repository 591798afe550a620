"""`scheduler collections forecast`: the occurrences a collection's jobs fire in each minute of the next hours, and
at which destinations (newer api-version: GET .../jobCollections/{c}/forecast, shared/api/forecast.py).

The table output is compact: the total and the busiest minutes (most occurrences first, at most MINUTES_SHOWN),
then each destination with its busiest second, its limit and its seconds over that limit (at most SECONDS_SHOWN
each), then the answer's notes. `-o json` prints the answer whole (every minute).
`register(app)` adds it to the `collections` group (main.py).
"""

from __future__ import annotations

from typing import Any

import typer

from .client import collection_path
from .collections import Collection, Group
from .context import guarded, options
from .occurrences import NEWER
from .output import emit_json, emit_message, emit_table
from .times import labelled

MINUTES_SHOWN = 10
SECONDS_SHOWN = 5


def _over(destination: dict[str, Any], zone: str | None) -> str:
    over = destination.get("overLimit") or []
    if not over:
        return "-" if destination.get("limit") is None else "none"
    shown = [f"{labelled(o.get('second'), zone)} ({o.get('count')})" for o in over[:SECONDS_SHOWN]]
    more = int(destination.get("overLimitSeconds") or len(over)) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _limit(destination: dict[str, Any]) -> str:
    limit = destination.get("limit")
    if limit is None:
        return "-"
    rule = destination.get("limitHost")
    return f"{limit:g}/s" + (f" ({rule})" if rule and rule != destination.get("destination") else "")


def show_forecast(answer: dict[str, Any], title: str, zone: str | None) -> None:
    minutes = answer.get("minutes") or []
    total = sum(int(m.get("count") or 0) for m in minutes)
    emit_message(
        f"{title}: {total} occurrence(s) from {labelled(answer.get('from'), zone)} to "
        f"{labelled(answer.get('to'), zone)} in {len(minutes)} minute(s)."
    )
    busiest = sorted(minutes, key=lambda m: (-int(m.get("count") or 0), str(m.get("minute"))))[:MINUTES_SHOWN]
    if busiest:
        emit_table(
            "Busiest minutes",
            ["Minute", "Occurrences"],
            [(labelled(m.get("minute"), zone), m.get("count")) for m in busiest],
        )
    destinations = answer.get("destinations") or []
    if destinations:
        emit_table(
            "Destinations",
            ["Destination", "Kind", "Total", "Busiest second", "Limit", "Seconds over the limit (occurrences)"],
            [
                (
                    d.get("destination"),
                    d.get("kind"),
                    d.get("total"),
                    f"{labelled((d.get('busiestSecond') or {}).get('second'), zone)} "
                    f"({(d.get('busiestSecond') or {}).get('count')})",
                    _limit(d),
                    _over(d, zone),
                )
                for d in destinations
            ],
            nowrap=(0,),
        )
    for note in answer.get("notes") or []:
        emit_message(f"Note: {note.get('message') or note.get('code')}")


def forecast(
    ctx: typer.Context,
    group: str = Group,
    collection: str = Collection,
    hours: int = typer.Option(24, "--hours", min=1, max=168, help="How many hours from now (1-168)."),
) -> None:
    """How many occurrences the collection's jobs fire in each minute of the next hours, per destination, and the
    seconds that would exceed a destination's rate limit (from the schedules, exceptions and pauses)."""
    opts = options(ctx)
    path = collection_path(opts.require_subscription(), group, collection)
    answer = opts.client().call("GET", f"{path}/forecast", query={**NEWER, "hours": hours})
    if opts.json:
        emit_json(answer)
        return
    show_forecast(answer or {}, f"Forecast of {collection}", opts.zone(None))


def register(app: typer.Typer) -> None:
    app.command("forecast", epilog="Example: scheduler collections forecast -g my-rg -c my-jobs --hours 24")(
        guarded(forecast)
    )
