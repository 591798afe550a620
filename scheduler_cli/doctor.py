"""`scheduler doctor`: check a deployment or a local host end to end and say what is wrong and what to do.

Read-only, over HTTP like every command: the anonymous GET /api/health (reachable, storage, the dispatcher's
heartbeat, backlog, poison queue, the host's clock against storage, the jobs past their expectation of success),
one management call with the given credentials (auth), and the destinations held back (doctor_destinations.py).
Each check (doctor_check.py) is `ok`, `warn` (worth a look; jobs still run on time) or `FAIL`, with a finding, its
details (one line each: the silent jobs) and, when not ok, what to do. Exit code: 0 when nothing failed, 1 when a
check failed, 3 when the endpoint could not be reached at all.

A job past its expectation (`silence`) is a warning, not a failure, as it leaves the health status alone: the
service works, one of its jobs does not succeed, and that is the job's owner's to look at.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import asdict
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import requests
import typer

from .client import API_ERROR, UNREACHABLE, CliError
from .context import Options, guarded, options
from .doctor_check import FAIL, OK, WARN, Check
from .doctor_destinations import destinations_check
from .output import emit_json

PROBE_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"  # any subscription tells whether credentials pass
CLOCK_LIMIT = 5.0  # seconds: the health endpoint's own limit for the host's clock against storage


def _local(endpoint: str) -> bool:
    return (urlsplit(endpoint).hostname or "") in {"127.0.0.1", "localhost", "::1"}


def _health(opts: Options) -> tuple[Check, dict[str, Any] | None, float | None]:
    """The reachability check, the health document, and this machine's clock minus the app's (seconds)."""
    url = f"{opts.endpoint.rstrip('/')}/health"
    started = time.monotonic()
    try:
        response = requests.get(url, timeout=30, headers={"Accept": "application/json", "User-Agent": "scheduler-cli"})
    except requests.RequestException as error:
        todo = (
            "start it: `make run` (Azurite and the local host), or pass the right --endpoint"
            if _local(opts.endpoint)
            else "check --endpoint (https://<app>.azurewebsites.net/api), that the function app is started "
            "(`az functionapp show -n <app> -g <group> --query state`) and that DNS and the network reach it"
        )
        reason = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(error))
        said = f"{type(error).__name__}: {reason.group(1)}" if reason else type(error).__name__
        return Check("reachable", FAIL, f"GET {url}: {said}", todo), None, None
    elapsed = (time.monotonic() - started) * 1000
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict) or "status" not in document:
        return (
            Check(
                "reachable",
                FAIL,
                f"GET {url} answered HTTP {response.status_code}, not a scheduler's health",
                "check --endpoint: the scheduler's API base URL ends in /api",
            ),
            None,
            None,
        )
    skew = None
    with contextlib.suppress(KeyError, TypeError, ValueError):  # a proxy may drop or mangle Date
        skew = round(time.time() - parsedate_to_datetime(response.headers["Date"]).timestamp() - 0.5, 1)
    answered = Check("reachable", OK, f"GET /health answered HTTP {response.status_code} in {elapsed:.0f} ms")
    return answered, document, skew


def _storage(health: dict[str, Any], local: bool) -> Check:
    if (health.get("storage") or {}).get("reachable"):
        return Check("storage", OK, "the app reaches its storage account")
    todo = (
        "is Azurite running? `make run` starts it; check AzureWebJobsStorage in local.settings.json"
        if local
        else "check the identity's roles on the storage account (Storage Table/Queue Data "
        "Contributor) and the AzureWebJobsStorage__* settings (infra/README.md)"
    )
    return Check("storage", FAIL, "the app cannot reach its storage: nothing can be read, queued or run", todo)


def _auth(opts: Options) -> Check:
    subscription = opts.subscription or PROBE_SUBSCRIPTION
    path = f"/subscriptions/{subscription}/providers/Microsoft.Scheduler/jobCollections"
    try:
        found = opts.client().list_all(path, limit=1000)
    except CliError as error:
        if error.status == 401:
            return Check(
                "auth",
                FAIL,
                f"the API refused the credentials ({error.code})",
                "key mode: pass --functions-key or SCHEDULER_FUNCTIONS_KEY (`az functionapp keys list`); "
                "entra mode: pass --token or SCHEDULER_TOKEN (`az account get-access-token --resource "
                "api://<appId> --query accessToken -o tsv`); docs/identity.md",
            )
        if error.status == 403:
            return Check(
                "auth",
                WARN,
                f"signed in, but without a role in subscription {subscription}",
                "ask an Owner for a role assignment at the subscription, group or collection "
                "(docs/identity.md), or pass the --subscription you work in",
            )
        if error.exit_code == UNREACHABLE:
            return Check("auth", FAIL, error.message, "see 'reachable'")
        return Check(
            "auth",
            FAIL,
            f"the API answered {error.code} (HTTP {error.status}): {error.message}",
            "look at the app's logs for this request",
        )
    where = (
        f"{len(found)} collection(s) in subscription {subscription}"
        if opts.subscription
        else "asked with a probe subscription; --subscription checks yours"
    )
    return Check("auth", OK, f"the API accepted the credentials ({where})")


def _heartbeat(health: dict[str, Any], local: bool) -> Check:
    dispatcher = health.get("dispatcher") or {}
    since, interval = dispatcher.get("secondsSinceLastTick"), dispatcher.get("intervalSeconds") or 60
    todo = (
        "the timer function `dispatcher` is not running: run the app with `make run` (and not with "
        "AzureWebJobs.dispatcher.Disabled=true); its log says why a tick failed"
        if local
        else "the timer function `dispatcher` is not running: check the app is started, the function is not "
        "disabled (AzureWebJobs.dispatcher.Disabled), and its failures in Application Insights "
        "(`traces | where message has 'dispatcher'`); the timer needs the host storage (AzureWebJobsStorage)"
    )
    if since is None:
        return Check(
            "heartbeat",
            FAIL if dispatcher.get("behind") else WARN,
            "the dispatcher has never ticked",
            todo if dispatcher.get("behind") else "wait a minute: the first tick comes at the next minute",
        )
    if dispatcher.get("behind") and since > 2 * interval:
        return Check(
            "heartbeat", FAIL, f"the dispatcher last ticked {since:.0f} s ago; it ticks every {interval} s", todo
        )
    return Check(
        "heartbeat",
        OK,
        f"the dispatcher ticked {since:.0f} s ago (every {interval} s, the last tick took "
        f"{dispatcher.get('lastTickDurationSeconds') or 0:.2f} s)",
    )


def _backlog(health: dict[str, Any]) -> Check:
    backlog = health.get("backlog") or {}
    count, oldest = backlog.get("overdueOccurrences") or 0, backlog.get("oldestOverdueSeconds")
    if not count:
        return Check("backlog", OK, "no occurrence is overdue")
    behind = (health.get("dispatcher") or {}).get("behind")
    return Check(
        "backlog",
        FAIL if behind else WARN,
        f"{count} occurrence(s) overdue, the oldest by {oldest or 0:.0f} s",
        "occurrences that should have been queued were not: if the dispatcher ticks, look at the "
        "`dispatch` function's failures and the scheduler-dispatch queue; if ticks run long, raise "
        "SCHEDULER_DUE_SHARDS (docs/capacity.md)",
    )


def _poison(health: dict[str, Any]) -> Check:
    depth = (health.get("backlog") or {}).get("poisonMessages") or 0
    if not depth:
        return Check("poison", OK, "the poison queue is empty")
    return Check(
        "poison",
        WARN,
        f"{depth} message(s) in scheduler-occurrences-poison: occurrences that could "
        "not be read, or failed every delivery",
        "read them (`az storage message peek --queue-name scheduler-occurrences-poison --num-messages 32 "
        "--auth-mode login --account-name <account>`), fix the cause, then clear the queue",
    )


def _off(skew: float, theirs: str) -> str:
    # Both ends read whole seconds from a Date header: within a second is as close as can be told.
    return f"agrees with {theirs} (within 1 s)" if abs(skew) < 1 else f"is {skew:+.1f} s off {theirs}"


def _clock(health: dict[str, Any], here: float | None) -> Check:
    skew = (health.get("clock") or {}).get("skewSecondsAgainstStorage")
    mine = f"; this machine's clock {_off(here, 'the app')}" if here is not None else ""
    if skew is None:
        return Check(
            "clock",
            WARN,
            f"the app did not measure its clock against storage{mine}",
            "upgrade the app: its health endpoint predates the clock check",
        )
    if abs(skew) > CLOCK_LIMIT:
        return Check(
            "clock",
            FAIL,
            f"the app's clock {_off(skew, 'storage')}{mine}",
            "synchronise the host's clock (NTP): occurrences are queued and claimed on it, so they run "
            "that much early or late",
        )
    return Check("clock", OK, f"the app's clock {_off(skew, 'storage')}{mine}")


def _ago(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


def _silent(job: dict[str, Any]) -> str:
    since = (
        f"last succeeded {job['lastSuccess']}"
        if job.get("lastSuccess")
        else f"never succeeded since it was created {job.get('silentSince')}"
    )
    return (
        f"{job.get('id')}: expects a success every {job.get('expectSuccessWithin')}; "
        f"{since} ({_ago(job.get('silentSeconds') or 0)} ago); {job.get('state')}"
    )


def _silence(health: dict[str, Any]) -> Check:
    silent = health.get("silentJobs")
    if not isinstance(silent, dict):
        return Check(
            "silence",
            WARN,
            "the app does not report jobs past their expectation of success",
            "upgrade the app: its health endpoint predates the check",
        )
    count, jobs = silent.get("count") or 0, silent.get("jobs")
    if not count:
        return Check("silence", OK, "no job is past its expectation of success (expectSuccessWithin)")
    finding = f"{count} job(s) have not succeeded within their expectation (expectSuccessWithin)"
    if jobs is None:  # the API is closed: the anonymous answer names no job
        return Check(
            "silence",
            WARN,
            f"{finding}, as of {silent.get('checkedAt')}",
            "the alert 'Scheduler: a job has not succeeded as expected', the scheduler.job.silence metric "
            "(attribute scheduler.job.id) and the app's log name each; the health answer names them only where "
            "the API is open (SCHEDULER_AUTH=none)",
        )
    details = [_silent(job) for job in jobs if isinstance(job, dict)]
    if count > len(details):
        details.append(f"and {count - len(details)} more (the scheduler.job.silence metric names each)")
    return Check(
        "silence",
        WARN,
        f"{finding}, as of {silent.get('checkedAt')}:",
        "look at each job's history (`scheduler jobs history -g <group> -c <collection> -n <job>`) and state "
        "(a Disabled or Faulted job runs nothing); it leaves this list at the first tick after a success",
        tuple(details),
    )


def examine(opts: Options) -> list[Check]:
    reachable, health, here = _health(opts)
    if health is None:
        return [reachable]
    local = _local(opts.endpoint)
    checks = [reachable, _storage(health, local)]
    checks.append(_auth(opts))
    if (health.get("storage") or {}).get("reachable"):
        checks += [_heartbeat(health, local), _backlog(health), _poison(health), _clock(health, here), _silence(health)]
        held = destinations_check(opts, opts.subscription or PROBE_SUBSCRIPTION)  # None: refused, as `auth` says
        checks += [held] if held is not None else []
    return checks


@guarded
def doctor(ctx: typer.Context) -> None:
    """Check the deployment (or local host) at --endpoint end to end: reachable, auth, dispatcher heartbeat,
    backlog, poison queue, clock against storage, jobs past their expectation, destinations held back; say what is
    wrong and what to do."""
    opts = options(ctx)
    checks = examine(opts)
    failed = [c for c in checks if c.status == FAIL]
    if opts.json:
        emit_json(
            {
                "endpoint": opts.endpoint,
                "checkedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "healthy": not failed,
                "checks": [{k: v for k, v in asdict(c).items() if v or k != "details"} for c in checks],
            }
        )
    else:  # plain lines, never wrapped: a report to read, paste into an issue or grep
        typer.echo(f"scheduler doctor: {opts.endpoint}")
        for check in checks:
            typer.echo(f"  {check.status:<4}  {check.name:<9}  {check.finding}")
            for detail in check.details:
                typer.echo(f"{'':19}{detail}")
            if check.todo:
                typer.echo(f"{'':19}what to do: {check.todo}")
        warned = sum(c.status == WARN for c in checks)
        typer.echo(f"{len(failed)} problem(s), {warned} warning(s)" if failed or warned else "all checks passed")
    if failed:
        raise typer.Exit(UNREACHABLE if checks[0].status == FAIL else API_ERROR)
