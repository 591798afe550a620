"""`scheduler doctor`'s `destinations` check: the destinations the scheduler holds back (GET .../providers/
Microsoft.Scheduler/destinations, newer api-version; shared/api/destinations.py), the deployment's.

A warning names each destination whose circuit is Open or HalfOpen (with its failures and its next probe) and each
one pushed back (a budget: with its last 429 or 503 and the hold until its Retry-After): the service works, those
targets do not keep up, and that is their owners' to look at. None: the check passes. Without the credentials'
leave (401) the check is left out, as the `auth` check says why; a role that does not cover the subscription's
jobs (403), or an app without the list, is a warning of its own.
"""

from __future__ import annotations

from typing import Any

from .client import CliError
from .context import Options
from .destinations import budget, destinations_path
from .doctor_check import OK, WARN, Check
from .occurrences import NEWER

NAME = "destinations"


def _circuit(item: dict[str, Any]) -> str:
    circuit = item.get("circuit")
    since = f" since {item['failingSince']}" if item.get("failingSince") else ""
    probing = " (a probe is under way)" if circuit == "HalfOpen" else ""
    return (
        f"circuit {circuit}{probing} after {item.get('failures', 0)} failure(s) in a row{since}; "
        f"no request goes before the next probe at {item.get('nextProbe') or '-'}"
    )


def _pushed(item: dict[str, Any]) -> str:
    last = item.get("lastPushBack") or {}
    said = f" (HTTP {last.get('status')} at {last.get('at')})" if last else ""
    return f"pushed back{said}: a budget of {budget(item)} for every job together, held until {item.get('holdUntil')}"


def _detail(item: dict[str, Any]) -> str:
    parts = []
    if item.get("circuit") in ("Open", "HalfOpen"):
        parts.append(_circuit(item))
    if item.get("budget") is not None:
        parts.append(_pushed(item))
    return f"{item.get('destination')}: " + "; ".join(parts)


def _refused(error: CliError) -> Check | None:
    if error.status == 401:
        return None
    if error.status == 403:
        return Check(
            NAME,
            WARN,
            "the credentials may not list the destinations (the deployment's: who may read every job of the "
            "subscription may)",
            "ask an Owner for a Reader role at the subscription (docs/identity.md), or pass the --subscription "
            "you work in",
        )
    if error.status in (400, 404):
        return Check(NAME, WARN, "the app does not list the destinations it holds back", "upgrade the app")
    return Check(
        NAME, WARN, f"the API answered {error.code} (HTTP {error.status}): {error.message}", "see the app's log"
    )


def destinations_check(opts: Options, subscription: str) -> Check | None:
    try:
        answer = opts.client().call("GET", destinations_path(subscription), query=NEWER) or {}
    except CliError as error:
        return _refused(error)
    items = [i for i in answer.get("value") or [] if isinstance(i, dict)]
    held = [i for i in items if i.get("circuit") in ("Open", "HalfOpen") or i.get("budget") is not None]
    if not held:
        return Check(NAME, OK, "no destination pushes back or has an open circuit")
    return Check(
        NAME,
        WARN,
        f"{len(held)} destination(s) held back, as of {answer.get('asOf')}:",
        "these targets refuse or fail: their owners' to look at. Attempts to them wait (ledger reason Deferred) "
        "without using a retry; a circuit closes at the first probe that succeeds, a budget widens as answers "
        "succeed. `scheduler destinations` lists them",
        tuple(_detail(i) for i in held),
    )
