"""What a 202 names is read with bounds and a fallback (shared/actions/accepted.py) and the next poll's due is clamped
before it becomes a time span (shared/executor/polling.py `poll_due`): no value a target sends raises.

Retry-After: ASCII delta-seconds or an HTTP-date, from 0 to MAX_RETRY_AFTER; anything else counts as absent. The
address to poll: an absolute http(s) URL of at most MAX_LOCATION_BYTES, else UnusableLocation with the reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.actions.accepted import MAX_LOCATION_BYTES, MAX_RETRY_AFTER, UnusableLocation, accepted_work, retry_after
from shared.actions.outbound import Reply
from shared.executor.polling import poll_due
from shared.model import AsyncCompletion

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
BASE = "https://api.example.com/jobs/work"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("5", 5.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("000120", 120.0),
        ("99999999999999999999", MAX_RETRY_AFTER),
        ("9" * 301, MAX_RETRY_AFTER),
        ("9" * 60_000, MAX_RETRY_AFTER),  # past Python's int conversion limit of 4300 digits
        ("0" * 60_000 + "3", 3.0),
        ("Sat, 28 Nov 2026 12:01:00 GMT", 60.0),
        ("Fri, 31 Dec 9999 23:59:59 GMT", MAX_RETRY_AFTER),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("Mon, 01 Jan 0001 00:00:00 GMT", 0.0),
    ],
)
def test_a_readable_retry_after_is_seconds_within_the_bound(value: str, seconds: float) -> None:
    assert retry_after(value, NOW) == seconds


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "²",  # superscript two: str.isdigit() says yes, float() says no
        "١٢",  # Arabic-Indic twelve: float() would read 12
        "５",  # fullwidth five
        "-5",
        "+5",
        "1.5",
        "1e3",
        "0x10",
        "5 s",
        "soon",
        "\x00",
        "Sat, 28 Nov 2026 12:01:00 -0000",  # no zone: not an HTTP-date
        "Fri, 31 Dec 99999 23:59:59 GMT",  # past the calendar's last year
        "Fri, 31 Dec 9999999999999999999999 23:59:59 GMT",
        "Fri, 31 Dec 2026 23:59:59 GMT" + " " * 100 + "x",
        "x" * 60_000,
    ],
)
def test_an_unreadable_retry_after_counts_as_absent(value: str | None) -> None:
    assert retry_after(value, NOW) is None


COMPLETION = AsyncCompletion.model_validate({"deadline": "P1D", "pollingInterval": "PT10S"})
SHORT = AsyncCompletion.model_validate({"deadline": "PT1M", "pollingInterval": "PT1S"})


@pytest.mark.parametrize(
    ("completion", "after", "wait"),
    [
        (COMPLETION, None, timedelta(seconds=10)),  # the pollingInterval
        (COMPLETION, float("nan"), timedelta(seconds=10)),
        (COMPLETION, 0.0, timedelta(seconds=1)),  # at least PT1S
        (COMPLETION, -5.0, timedelta(seconds=1)),
        (COMPLETION, 30.0, timedelta(seconds=30)),
        (COMPLETION, 1e20, timedelta(hours=1)),  # at most PT1H: a time span of 1e20 s overflows
        (COMPLETION, 1e301, timedelta(hours=1)),
        (COMPLETION, float("inf"), timedelta(hours=1)),
        (COMPLETION, float(MAX_RETRY_AFTER), timedelta(hours=1)),
        (SHORT, 1e20, timedelta(minutes=1)),  # and never past the deadline
        (SHORT, None, timedelta(seconds=1)),
    ],
)
def test_the_next_poll_is_due_within_the_clamp_and_the_deadline(
    completion: AsyncCompletion, after: float | None, wait: timedelta
) -> None:
    assert poll_due(completion, after, NOW, NOW) == NOW + wait


def test_past_the_deadline_the_next_poll_is_due_at_once() -> None:
    assert poll_due(SHORT, 1e20, NOW - timedelta(minutes=5), NOW) == NOW


def reply(*headers: tuple[str, str], status: int = 202) -> Reply:
    return Reply(status, "Accepted", list(headers), b"")


def test_an_azure_async_operation_outranks_the_location_and_a_relative_one_resolves() -> None:
    accepted = accepted_work(
        BASE, reply(("Location", "/l/1"), ("azure-asyncoperation", " ops/7 "), ("Retry-After", "3"))
    )
    assert accepted is not None
    assert (accepted.location, accepted.operation, accepted.retry_after) == (
        "https://api.example.com/jobs/ops/7",
        True,
        3,
    )


def test_an_empty_azure_async_operation_leaves_the_location_polled_as_a_location() -> None:
    accepted = accepted_work(BASE, reply(("Azure-AsyncOperation", "  "), ("Location", "https://other.example/s")))
    assert accepted is not None and (accepted.location, accepted.operation) == ("https://other.example/s", False)


def test_a_202_naming_nothing_or_another_status_is_not_accepted_work() -> None:
    assert accepted_work(BASE, reply(("Retry-After", "5"))) is None
    assert accepted_work(BASE, reply(("Location", "/x"), status=201)) is None


def test_a_location_of_exactly_the_bound_is_polled() -> None:
    path = "/" + "a" * (MAX_LOCATION_BYTES - len("https://h.example/"))
    accepted = accepted_work(BASE, reply(("Location", f"https://h.example{path}")))
    assert accepted is not None and len(accepted.location) == MAX_LOCATION_BYTES


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ((("Location", "/" + "a" * 60_000),), "its Location is 60001 bytes long, more than the 8192 polled"),
        ((("Location", "/" + "é" * 5000),), "its Location is 10001 bytes long"),
        ((("Location", "/" + "a" * 8180),), "its Location resolves to more than the 8192 bytes polled"),
        ((("Azure-AsyncOperation", "javascript:alert(1)"),), "its Azure-AsyncOperation is not an http(s) URL"),
        ((("Azure-AsyncOperation", "file:///etc/passwd"),), "its Azure-AsyncOperation is not an http(s) URL"),
        ((("Location", "data:text/plain,x"),), "its Location is not an http(s) URL"),
        ((("Location", "http://:80/x"),), "its Location is not an http(s) URL"),  # no host
        ((("Location", "https://h.example:70000/"),), "its Location is not a valid URL"),
        ((("Location", "https://h.example:port/"),), "its Location is not a valid URL"),
        ((("Location", "https://[::1/"),), "its Location is not a valid URL"),
        ((("Location", "/s\udcff"),), "its Location is not a valid URL"),  # a byte that was not UTF-8
        ((("Location", "/s\x00t"),), "its Location holds control characters"),
        ((("Location", "/s\tt"),), "its Location holds control characters"),
    ],
)
def test_an_address_that_cannot_be_polled_says_why(headers: tuple[tuple[str, str], ...], reason: str) -> None:
    with pytest.raises(UnusableLocation) as refused:
        accepted_work(BASE, reply(*headers))
    assert str(refused.value).startswith(reason), str(refused.value)
