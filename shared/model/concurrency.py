"""Properties only the newer api-version knows (issue 27): how a job's occurrences share time with each other and
with their targets. Each is a row of `EXTENSIONS` (versions.py), so 2016-03-01 neither shows nor loses them.

Rules (docs/decisions.md, "Overlap, limits, long-running completion, spread"):
- job `overlapPolicy`: `Allow` (the default: occurrences may overlap, the old behaviour), `Skip` (an occurrence
  due while an earlier one of the job still runs is skipped, ledger reason SkippedByOverlap) or `BufferOne` (it
  waits until the running one ends, then runs; at most one waits, later ones are skipped);
- job `spreadWindow`: each occurrence fires at a fixed offset inside the window after its nominal time, the
  offset derived from the job's identity (jobstate/spread.py); from PT1S to PT1H, and at most the job's
  shortest gap between two occurrences (lifecycle/validation.py: the series is needed for that);
- Http `request.asyncCompletion`: the target works asynchronously; a 202 Accepted with a Location is polled
  (as ARM clients poll) every `pollingInterval` or its Retry-After, until a final status or `deadline` after
  the first answer;
- collection `maxConcurrentExecutions`: the most occurrences of its jobs that run at once, across instances;
- collection `targetRateLimits`: per target host (exact, or `*.` and a domain for its subdomains), the most
  requests per second the collection's Http actions send it; requests beyond wait for their slot;
- collection `autoSpread` (issue 40): `{tolerance}` (PT1S to PT5M): the occurrences of a second that would exceed
  their destination's budget fire later, each at most `tolerance` after its time (jobstate/auto_spread.py).

Values are strict (issue 36): numbers are JSON numbers, never booleans (`true` is not 1) or strings, and the
limits' hosts are ASCII as DNS carries them (an internationalised name in its `xn--` form, `host_key`): Unicode
case folding would make the Kelvin sign, `ſ`, `İ` or `ı` alias or hide ASCII letters, and such a host never
matches what the HTTP client sends.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import timedelta
from typing import Annotated

import idna
from pydantic import Field, field_validator

from ..keys import fold_case
from .base import CaseInsensitiveEnum, WireModel
from .durations import Duration

SPREAD_MIN = timedelta(seconds=1)  # offsets are whole seconds: a shorter window would always be 0
SPREAD_MAX = timedelta(hours=1)
AUTO_SPREAD_MIN = timedelta(seconds=1)
# The dispatcher counts, for each minute it dispatches, what the tolerance before it spilled into it: a longer one
# would have it walk more of every job's series each minute.
AUTO_SPREAD_MAX = timedelta(minutes=5)

ASYNC_DEFAULT_DEADLINE = timedelta(hours=1)
ASYNC_MIN_DEADLINE = timedelta(minutes=1)
ASYNC_MAX_DEADLINE = timedelta(days=7)
# ARM clients (the Azure SDKs) poll every 30 s when the service sends no Retry-After.
ASYNC_DEFAULT_INTERVAL = timedelta(seconds=30)
ASYNC_MIN_INTERVAL = timedelta(seconds=1)
ASYNC_MAX_INTERVAL = timedelta(hours=1)

MAX_CONCURRENT_EXECUTIONS = 1000  # P20Premium's most jobs: a higher limit could never bind
MAX_RATE_LIMITS = 20
MIN_REQUESTS_PER_SECOND = 0.01  # one request every 100 seconds
MAX_REQUESTS_PER_SECOND = 1000.0

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*", re.IGNORECASE | re.ASCII)


class WaitCause(CaseInsensitiveEnum):
    """What an occurrence waited for before its first attempt (a ledger entry's `waitedFor`)."""

    PREVIOUS = "Previous"  # the previous occurrence of its job (overlapPolicy BufferOne)
    CONCURRENCY = "Concurrency"  # a slot of its collection's maxConcurrentExecutions
    RATE_LIMIT = "RateLimit"  # a slot of its target host's requestsPerSecond
    DESTINATION = "Destination"  # its destination pushed back (429, 503) or its circuit is open (issue 40)


class OverlapPolicy(CaseInsensitiveEnum):
    """What an occurrence does when an earlier occurrence of the same job still runs."""

    ALLOW = "Allow"
    SKIP = "Skip"
    BUFFER_ONE = "BufferOne"


def _within(value: timedelta | None, low: timedelta, high: timedelta, what: str) -> timedelta | None:
    if value is not None and not low <= value <= high:
        raise ValueError(what)
    return value


class AsyncCompletion(WireModel):
    deadline: Duration | None = Field(
        default=None,
        description="How long after the first 202 Accepted the work may take (PT1M to P7D, default PT1H); "
        "past it the attempt fails.",
    )
    polling_interval: Duration | None = Field(
        default=None,
        alias="pollingInterval",
        description="Between two polls when the target sends no Retry-After (PT1S to PT1H, default PT30S).",
    )

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: timedelta | None) -> timedelta | None:
        return _within(value, ASYNC_MIN_DEADLINE, ASYNC_MAX_DEADLINE, "deadline must be from PT1M to P7D.")

    @field_validator("polling_interval")
    @classmethod
    def _interval(cls, value: timedelta | None) -> timedelta | None:
        return _within(value, ASYNC_MIN_INTERVAL, ASYNC_MAX_INTERVAL, "pollingInterval must be from PT1S to PT1H.")

    @property
    def effective_deadline(self) -> timedelta:
        return self.deadline or ASYNC_DEFAULT_DEADLINE

    @property
    def effective_interval(self) -> timedelta:
        return self.polling_interval or ASYNC_DEFAULT_INTERVAL


def valid_host(host: str) -> bool:
    """An ASCII DNS host name (optionally `*.` and a domain), or an IP address without a zone; no scheme, port,
    path or trailing dot."""
    if len(host) > 253 or not host.isascii():
        return False
    if _HOST.fullmatch(host):
        return True
    try:
        ipaddress.ip_address(host if "%" not in host else "")
    except ValueError:
        return False
    return True


def ascii_form(host: str) -> str | None:
    """The ASCII (IDNA, `xn--`) form of an internationalised host name as HTTP clients send it, or None when it
    has none."""
    wildcard, name = ("*.", host[2:]) if host.startswith("*.") else ("", host)
    try:
        return wildcard + idna.encode(name, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def host_key(host: str) -> str:
    """What two hosts are compared by: an IP address in its canonical text, a name in ASCII lower case (a
    non-ASCII name as the HTTP client sends it: its IDNA form)."""
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        pass
    if not host.isascii():
        host = ascii_form(host) or host
    return fold_case(host)


class TargetRateLimit(WireModel):
    host: str = Field(description="A target host name (api.example.com), or *. and a domain for its subdomains.")
    requests_per_second: float | int = Field(
        alias="requestsPerSecond", description="At most this many requests per second (0.01 to 1000)."
    )

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        if not value.isascii():
            written = ascii_form(value)
            hint = f" ({written!r} here)" if written is not None and valid_host(written) else ""
            raise ValueError(f"host must be written in ASCII: an internationalised name in its IDNA form{hint}.")
        if not valid_host(value):
            raise ValueError(
                "host must be a host name such as api.example.com (or *.example.com for its subdomains), or an IP "
                "address, without scheme, port or path."
            )
        return value

    @field_validator("requests_per_second", mode="before")
    @classmethod
    def _rate(cls, value: object) -> float:
        # Before pydantic's own parsing, which would read `true` as 1.0 and "5" as 5.0.
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError("requestsPerSecond must be a number from 0.01 to 1000.")
        if not MIN_REQUESTS_PER_SECOND <= value <= MAX_REQUESTS_PER_SECOND:
            raise ValueError("requestsPerSecond must be a number from 0.01 to 1000.")
        return value


class AutoSpread(WireModel):
    tolerance: Duration = Field(
        description="How much later than its time an occurrence may fire so that no second exceeds its "
        "destination's budget (whole seconds, PT1S to PT5M)."
    )

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, value: timedelta) -> timedelta:
        if not AUTO_SPREAD_MIN <= value <= AUTO_SPREAD_MAX or value % timedelta(seconds=1):
            raise ValueError("tolerance must be whole seconds from PT1S to PT5M.")
        return value


MaxConcurrentExecutions = Annotated[int, Field(ge=1, le=MAX_CONCURRENT_EXECUTIONS, strict=True)]


def unique_hosts(limits: list[TargetRateLimit] | None) -> list[TargetRateLimit] | None:
    """The rules, refused when there are too many or two name the same host (`host_key`)."""
    if limits is None:
        return None
    if len(limits) > MAX_RATE_LIMITS:
        raise ValueError(f"at most {MAX_RATE_LIMITS} target rate limits.")
    seen: set[str] = set()
    for limit in limits:
        folded = host_key(limit.host)
        if folded in seen:
            raise ValueError(f"the host {limit.host} is named twice.")
        seen.add(folded)
    return limits
