"""The CLI's side of issue 27 (docs/decisions.md, "Overlap, limits, long-running completion, spread"): the options
that set a job's `overlapPolicy` and `spreadWindow` and a collection's `maxConcurrentExecutions` and
`targetRateLimits`, and how `list`/`show` put them in words. The values are the API's to validate (a 400 names
the member); only the `HOST=RPS` shape of `--rate-limit` is read here.
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


def job_members(properties: dict[str, Any], overlap: str | None, spread: str | None) -> dict[str, Any]:
    """`properties` with the options applied (they win over a file's members; '' removes the spread)."""
    if overlap:
        properties["overlapPolicy"] = overlap
    if spread is not None:
        properties["spreadWindow"] = spread or None
    return properties


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
    properties: dict[str, Any], max_concurrent: int | None, limits: list[str] | None, no_limits: bool
) -> dict[str, Any]:
    """`properties` with the collection options applied (0 and --no-rate-limits remove, as null in a PATCH)."""
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
