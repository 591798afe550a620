"""The console's HTTP side: one HTML shell for every page, the static assets, and the schedule endpoint.

Contract of `handle(method, path, url, body)` (`path` is what follows `console/` in the route):
- GET ``""`` or an ARM-id-shaped path (``subscriptions/{sub}[/resourceGroups/{rg}/providers/Microsoft.Scheduler/
  jobCollections/{jc}[/jobs/{job}]]``): the HTML shell; the browser script reads its own address and renders
  the page, reading and writing only through the management API with the caller's credentials;
- GET ``assets/{name}``: a file of `static/` (fixed names only; no path is ever joined from input);
- POST ``schedule``: `{"jobs": [{"startTime", "recurrence", "from"?}], "count"?: n}` answers
  `{"value": [{"description", "occurrences"} | {"error": {"code", "message"}}]}`: the schedule in words and
  the next occurrences computed by the engine (shared/console/schedule.py). It reads nothing stored, so
  it needs no credentials and can leak nothing;
- POST ``check`` and ``limits``: the members of a job or collection document the API would ignore, and
  collections' effective limits (shared/console/checks.py); stateless in the same way;
- POST ``attempts``: given a job's ledger entries and its 2016-03-01 history, which attempts belong to which
  occurrence (shared/console/attempts.py, the rule `scheduler jobs history` uses too); stateless as well;
- POST ``backfill``: the job page's backfill form as the API requests it sends, a what-if and the run
  (shared/console/backfill.py); stateless as well;
- anything else: 404 (the shell for an unknown page would hide mistakes in shared links).
The shell and assets hold no data, so they are served without a key; every datum comes from the API, in its
newest api-version (named in a meta element of the shell), which shows every extension. The
shell carries how to sign in (shared/console/signin.py: public values only) in a meta element, and its
Content-Security-Policy lets the page's requests reach its own origin and, when it signs users in with
Entra ID, the tenant's token endpoint.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from ..model.versions import NEWEST
from . import attempts, backfill, checks
from .schedule import MAX_OCCURRENCES, ScheduleError, describe, upcoming
from .signin import SignIn

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
_ASSET = re.compile(r"^[a-z][a-z0-9-]*\.(js|css|svg)$")
_ARM_PAGE = re.compile(
    r"^subscriptions/[^/]+(/resourceGroups/[^/]+/providers/Microsoft\.Scheduler/jobCollections/[^/]+"
    r"(/jobs/[^/]+)?)?/?$",
    re.IGNORECASE,
)
_MAX_JOBS = 200  # jobs per schedule request: one page of the console's list is 25
# Scripts and styles come only from this origin: nothing inline, nothing from a CDN.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src {connect}; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


@dataclass
class ConsoleResponse:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def asset_names() -> list[str]:
    """Every file the console ships (what packaging must include)."""
    return sorted(p.name for p in resources.files(__package__).joinpath("static").iterdir() if _ASSET.match(p.name))


def _json(status: int, document: dict[str, Any]) -> ConsoleResponse:
    return ConsoleResponse(
        status, json.dumps(document).encode(), "application/json; charset=utf-8", {"Cache-Control": "no-store"}
    )


def _error(status: int, code: str, message: str) -> ConsoleResponse:
    return _json(status, {"error": {"code": code, "message": message}})


def _prefixes(url: str) -> tuple[str, str]:
    """(the API base path, the console base path) from the request's own address, e.g. ("/api", "/api/console"),
    so a host.json routePrefix other than "api" still works."""
    path = urlsplit(url).path
    at = path.lower().find("/console")
    api = path[:at] if at >= 0 else "/api"
    return api, f"{api}/console"


def shell(url: str, sign_in: SignIn) -> ConsoleResponse:
    api, console = _prefixes(url)
    page = _static("index.html").decode("utf-8")
    page = (
        page.replace("{{api}}", html.escape(api))
        .replace("{{apiVersion}}", html.escape(NEWEST.name))
        .replace("{{console}}", html.escape(console))
        .replace("{{signin}}", html.escape(json.dumps(sign_in.browser_config())))
    )
    policy = _CSP.format(connect=" ".join(("'self'", *sign_in.connect_sources())))
    # no-referrer also keeps a returning sign-in's ?code= out of any Referer header.
    return ConsoleResponse(
        200,
        page.encode("utf-8"),
        "text/html; charset=utf-8",
        {
            "Content-Security-Policy": policy,
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
        },
    )


def asset(name: str) -> ConsoleResponse:
    if not _ASSET.match(name) or name not in asset_names():
        return _error(404, "NotFound", "No such console asset.")
    suffix = name[name.rindex(".") :]
    return ConsoleResponse(
        200, _static(name), _TYPES[suffix], {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    )


def _instant(value: Any, path: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ScheduleError(path, "must be an ISO 8601 date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def schedule(body: bytes, now: datetime) -> ConsoleResponse:
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        return _error(400, "BadRequest", "The request body is not valid JSON.")
    jobs = document.get("jobs") if isinstance(document, dict) else None
    count = document.get("count", 10) if isinstance(document, dict) else None
    if not isinstance(jobs, list) or len(jobs) > _MAX_JOBS:
        return _error(400, "BadRequest", f"jobs: a list of at most {_MAX_JOBS} objects is required.")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_OCCURRENCES:
        return _error(400, "BadRequest", f"count: an integer from 0 to {MAX_OCCURRENCES} is required.")
    answers: list[dict[str, Any]] = []
    for index, job in enumerate(jobs):
        try:
            if not isinstance(job, dict):
                raise ScheduleError(f"jobs[{index}]", "must be an object")
            after = _instant(job["from"], f"jobs[{index}].from") if job.get("from") else now
            start, recurrence = job.get("startTime"), job.get("recurrence")
            answers.append(
                {
                    "description": describe(start, recurrence),
                    "occurrences": [
                        t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in upcoming(start, recurrence, after, count)
                    ],
                }
            )
        except ScheduleError as error:
            answers.append({"error": {"code": "BadRequest", "message": str(error)}})
    return _json(200, {"value": answers})


def handle(
    method: str, path: str, url: str, body: bytes, now: datetime | None = None, sign_in: SignIn | None = None
) -> ConsoleResponse:
    """`sign_in` defaults to what the app settings say (SignIn.from_environment)."""
    path = path.strip("/")
    verb = method.upper()
    if verb == "POST" and path == "schedule":
        return schedule(body, now or datetime.now(UTC))
    if verb == "POST" and path in ("check", "limits"):
        status, answer = checks.members(body) if path == "check" else checks.limits(body)
        return _json(status, answer)
    if verb == "POST" and path == "attempts":
        return _json(*attempts.answer(body))
    if verb == "POST" and path == "backfill":
        return _json(*backfill.answer(body, now or datetime.now(UTC)))
    if verb != "GET":
        return _error(405, "InvalidHttpVerb", f"{verb} is not supported here.")
    if path.startswith("assets/"):
        return asset(path[len("assets/") :])
    if path == "" or _ARM_PAGE.match(path):
        return shell(url, sign_in or SignIn.from_environment())
    return _error(404, "NotFound", "No such console page.")
