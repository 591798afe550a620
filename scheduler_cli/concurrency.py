"""The options that set members of the newer api-version, and how `list`/`show` put them in words: a job's
`overlapPolicy` and `spreadWindow` and a collection's `maxConcurrentExecutions` and `targetRateLimits` (issue 27,
docs/decisions.md, "Overlap, limits, long-running completion, spread") and `autoSpread` (issue 40,
docs/decisions.md, "Automatic spread"); a job's `expectSuccessWithin` and `missedRunPolicy` (docs/decisions.md,
"Missed runs, backfill, the ledger"). The values are the API's to validate (a 400 names the member); only the
`HOST=RPS` shape of `--rate-limit` is read here.
"""

from __future__ import annotations

from typing import Any

import typer

from .client import USAGE_ERROR, CliError

OverlapOption = typer.Option(
    None,
    "--overlap-policy",
    help="Allow (occurrences may overlap), Skip (skip one due while the previous runs) or BufferOne "
    "(it runs when the previous ends; at most one waits).",
)
SpreadOption = typer.Option(
    None,
    "--spread-window",
    help="Fire each occurrence at a fixed offset inside this window (PT1S to PT1H, e.g. PT5M); '' removes it.",
)
RunOverlapOption = typer.Option(
    None, "--overlap-policy", help="The overlap policy of this run instead of the job's (Allow, Skip, BufferOne)."
)
MaxConcurrentOption = typer.Option(
    None,
    "--max-concurrent",
    min=0,
    help="maxConcurrentExecutions: the most occurrences running at once, across instances (0 removes the limit).",
)
RateLimitOption = typer.Option(
    None,
    "--rate-limit",
    metavar="HOST=RPS",
    help="targetRateLimits: at most RPS requests per second to HOST (*.example.com for its subdomains); "
    "repeat for more hosts; replaces the collection's list.",
)
NoRateLimitsOption = typer.Option(False, "--no-rate-limits", help="Remove every targetRateLimits rule.")
AutoSpreadOption = typer.Option(
    None,
    "--auto-spread",
    metavar="DURATION",
    help="autoSpread.tolerance: occurrences of a second that would exceed their destination's budget fire up to "
    "this much later (whole seconds, PT1S to PT5M, e.g. PT30S).",
)
NoAutoSpreadOption = typer.Option(False, "--no-auto-spread", help="Remove autoSpread (occurrences fire on time).")
# `create` refuses a name already taken (as the console does): replacing one wipes what the command leaves out.
ReplaceOption = typer.Option(
    False, "--replace", help="Replace it if it exists (PUT: what the command does not set goes back to its default)."
)


ExpectOption = typer.Option(
    None,
    "--expect-success-within",
    metavar="DURATION",
    help="expectSuccessWithin: the job should succeed at least this often (PT1M to 18 months, e.g. PT2M, P1D); "
    "'' removes it.",
)
MissedRunOption = typer.Option(
    None,
    "--missed-run-policy",
    metavar="Skip|Latest|All",
    help="missedRunPolicy.type, for occurrences missed while the scheduler could not run them: Skip (none runs), "
    "Latest (the default: the latest runs once) or All (the latest 10 of the last day, unless the file says "
    "otherwise); '' removes it.",
)


def job_members(
    properties: dict[str, Any],
    overlap: str | None,
    spread: str | None,
    expect: str | None = None,
    missed: str | None = None,
) -> dict[str, Any]:
    """`properties` with the options applied (they win over a file's members; '' removes a member). A missed-run
    policy other than All drops the file's (or, in a PATCH, the stored) window and maxRuns, which are All's."""
    if overlap:
        properties["overlapPolicy"] = overlap
    if spread is not None:
        properties["spreadWindow"] = spread or None
    if expect is not None:
        properties["expectSuccessWithin"] = expect or None
    if missed is not None:
        given = properties.get("missedRunPolicy")
        keep = given if isinstance(given, dict) and missed.lower() == "all" else {"window": None, "maxRuns": None}
        properties["missedRunPolicy"] = {**keep, "type": missed} if missed else None
    return properties


def missed_run_words(properties: dict[str, Any]) -> str:
    policy = properties.get("missedRunPolicy") or {}
    kind = str(policy.get("type") or "Latest")
    if kind.lower() == "skip":
        return "Skip: occurrences missed while the scheduler could not run them do not run"
    if kind.lower() == "all":
        return (
            f"All: the latest {policy.get('maxRuns') or 10} missed occurrences of the last "
            f"{policy.get('window') or 'P1D'} run, oldest first"
        )
    return ("Latest" if policy else "Latest (default)") + ": the latest missed occurrence runs once"


def rate_limits(values: list[str] | None) -> list[dict[str, Any]] | None:
    """`--rate-limit HOST=RPS` values as targetRateLimits rules; None when none were given."""
    if not values:
        return None
    rules = []
    for value in values:
        host, sep, rate = value.partition("=")
        try:
            number = float(rate)
        except ValueError:
            number = -1.0
        if not sep or not host.strip() or number <= 0:
            raise CliError("InvalidRateLimit", f"--rate-limit {value!r}: expected HOST=RPS, e.g. api.example.com=50")
        rules.append({"host": host.strip(), "requestsPerSecond": int(number) if number.is_integer() else number})
    return rules


def collection_members(
    properties: dict[str, Any],
    max_concurrent: int | None,
    limits: list[str] | None,
    no_limits: bool,
    auto_spread: str | None = None,
    no_auto_spread: bool = False,
) -> dict[str, Any]:
    """`properties` with the collection options applied (0, --no-rate-limits and --no-auto-spread remove, as null
    in a PATCH)."""
    if no_auto_spread and auto_spread is not None:
        raise CliError("InvalidAutoSpread", "--auto-spread and --no-auto-spread exclude each other", USAGE_ERROR)
    if no_auto_spread:
        properties["autoSpread"] = None
    elif auto_spread is not None:
        properties["autoSpread"] = {"tolerance": auto_spread}
    if max_concurrent is not None:
        properties["maxConcurrentExecutions"] = max_concurrent or None
    if no_limits and limits:
        raise CliError("InvalidRateLimit", "--rate-limit and --no-rate-limits exclude each other", USAGE_ERROR)
    if no_limits:
        properties["targetRateLimits"] = None
    elif limits:
        properties["targetRateLimits"] = rate_limits(limits)
    return properties


def overlap_words(properties: dict[str, Any]) -> str:
    """`Skip, spread PT5M`: the job's overlap policy (Allow when none) and its spread window."""
    spread = properties.get("spreadWindow")
    return f"{properties.get('overlapPolicy') or 'Allow'}" + (f", spread {spread}" if spread else "")


def async_words(action: dict[str, Any]) -> str:
    completion = (action.get("request") or {}).get("asyncCompletion")
    if completion is None:
        return "-"
    return (
        f"202 + Location polled every {completion.get('pollingInterval', 'PT30S')} (or its Retry-After), "
        f"for up to {completion.get('deadline', 'PT1H')}"
    )


def limits_words(properties: dict[str, Any]) -> tuple[str, str]:
    """(maxConcurrentExecutions, targetRateLimits) in words."""
    most = properties.get("maxConcurrentExecutions")
    rules = properties.get("targetRateLimits") or []
    rates = ", ".join(f"{r.get('host')} {r.get('requestsPerSecond')}/s" for r in rules) or "-"
    return (str(most) if most else "no limit"), rates


def auto_spread_words(properties: dict[str, Any]) -> str:
    """The collection's autoSpread in words: how much later a crowded second's occurrences may fire."""
    tolerance = (properties.get("autoSpread") or {}).get("tolerance")
    return f"up to {tolerance} later" if tolerance else "off"
