"""Rules a job must satisfy beyond the shape of its JSON: action/target consistency, authentication,
retry bounds, startTime/endTime and the recurrence.

Each rule raises InvalidDefinition naming the property path. Plan and quota rules live in quotas.py;
state rules, which need the stored job, in states.py.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

from ..actions.framing import is_framing_header
from ..actions.oauth import valid_tenant
from ..jobstate import engine_recurrence
from ..model import (
    HttpAuthentication,
    HttpAuthenticationType,
    HttpRequest,
    JobErrorAction,
    JobProperties,
    RetryPolicy,
    ServiceBusMessage,
    format_duration,
)
from ..model.concurrency import SPREAD_MAX, SPREAD_MIN
from ..recurrence import OccurrenceSeries, RecurrenceError
from .documents import ACTION_TARGETS
from .errors import InvalidDefinition as Invalid

# Characters XML 1.0 cannot carry (its `Char` production): a queue message holding one would make the
# StorageQueue envelope unparseable for every consumer (a lone surrogate cannot even be sent).
_NOT_XML_CHAR = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

MIN_RETRY_INTERVAL = timedelta(seconds=15)
MIN_EXPECTATION = timedelta(minutes=1)  # expectSuccessWithin (extension): the dispatcher's tick interval
HORIZON_MONTHS = 18  # "Time to start time: max 18 months"; also the longest retry interval

_REQUIRED_AUTH = {
    HttpAuthenticationType.BASIC: ("username", "password"),
    HttpAuthenticationType.CLIENT_CERTIFICATE: ("pfx", "password"),
    HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH: ("tenant", "audience", "clientId", "secret"),
    HttpAuthenticationType.MANAGED_IDENTITY: ("audience",),
}
# What ManagedIdentity takes no part of: its token is the app's own identity's, in the app's tenant, and no secret
# of the job's is stored for it (a secret sent along would be sealed and kept for nothing).
_NOT_FOR_MANAGED_IDENTITY = ("secret", "password", "pfx", "username", "tenant")


def add_months(instant: datetime, months: int) -> datetime:
    """The same wall time `months` later, clamped to the month's last day (Jan 31 + 1 month = Feb 28/29).
    ValueError past year 9999 (`horizon` measures the span there)."""
    total = instant.month - 1 + months
    year, month = instant.year + total // 12, total % 12 + 1
    day = min(instant.day, calendar.monthrange(year, month)[1])
    return instant.replace(year=year, month=month, day=day)


def horizon(now: datetime) -> timedelta:
    """The span of HORIZON_MONTHS from `now`. Within them of year 9999's end it is measured 400 years earlier
    (the Gregorian calendar repeats every 400 years), so the span stays defined where its end is not."""
    base = now if now.year <= 9999 - 2 else now.replace(year=now.year - 400)
    return add_months(base, HORIZON_MONTHS) - base


def validate_authentication(auth: HttpAuthentication, path: str) -> None:
    if auth.type == HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH and auth.tenant and not valid_tenant(auth.tenant):
        raise Invalid(
            "The tenant must be a tenant id (GUID) or a domain name such as contoso.onmicrosoft.com.", f"{path}.tenant"
        )
    required = _REQUIRED_AUTH.get(auth.type, ())
    values = auth.model_dump(by_alias=True, context={"with_secrets": True})
    if auth.type == HttpAuthenticationType.MANAGED_IDENTITY:
        for name in _NOT_FOR_MANAGED_IDENTITY:
            if values.get(name) is not None:
                raise Invalid(
                    f"'{name}' does not apply to 'ManagedIdentity' authentication: the token is the Function app's "
                    "managed identity's, and no secret is stored for it.",
                    f"{path}.{name}",
                )
    missing = [name for name in required if not values.get(name)]
    if not missing:
        return
    if auth.type == HttpAuthenticationType.BASIC:  # the real service's message (docs/wire-contract.md Q16)
        raise Invalid("'Username' and 'Password' are required for 'Basic' type of Authentication.", path)
    raise Invalid(f"{', '.join(missing)} required for '{auth.type.value}' authentication.", f"{path}.{missing[0]}")


def validate_retry(policy: RetryPolicy | None, path: str, now: datetime) -> None:
    if policy is None:
        return
    longest = horizon(now)
    for name, value in (("retryInterval", policy.retry_interval), ("maxRetryInterval", policy.max_retry_interval)):
        if value is not None and not MIN_RETRY_INTERVAL <= value <= longest:
            raise Invalid(f"{name} must be from 15 seconds to 18 months.", f"{path}.{name}")


# RFC 9110 token (method and header names); header values: visible Latin-1 and spaces, no CR/LF.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


def validate_headers(headers: dict[str, str], path: str) -> None:
    """Headers the action could never send are rejected now, rather than failing every run later."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise Invalid(
                "A header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~).", f"{path}.{name!r}"
            )
        if is_framing_header(name):
            raise Invalid(
                f"The header '{name}' is set by the scheduler's HTTP client; hop-by-hop and framing "
                "headers (Transfer-Encoding, Content-Length, Connection, Host, Upgrade, TE, Trailer, "
                "Keep-Alive, Proxy-*) cannot be set by a job.",
                f"{path}.{name}",
            )
        if not _HEADER_VALUE.fullmatch(value):
            raise Invalid(
                "A header value cannot hold line breaks, control characters or characters beyond Latin-1.",
                f"{path}.{name}",
            )


def _validate_target(action: JobErrorAction, path: str) -> None:
    """The action has the target member its type names (ACTION_TARGETS), and no other."""
    field = ACTION_TARGETS[action.type]
    present = {
        name
        for name, attr in (
            ("request", action.request),
            ("queueMessage", action.queue_message),
            ("serviceBusQueueMessage", action.service_bus_queue_message),
            ("serviceBusTopicMessage", action.service_bus_topic_message),
        )
        if attr
    }
    if field not in present:
        raise Invalid(f"An action of type {action.type.value} needs '{field}'.", f"{path}.{field}")
    if present - {field}:
        other = sorted(present - {field})[0]
        raise Invalid(f"An action of type {action.type.value} cannot have '{other}'.", f"{path}.{other}")


def _validate_request(request: HttpRequest, path: str) -> None:
    uri = request.uri
    if not uri.lower().startswith(("http://", "https://")) or len(uri.split("//", 1)[1]) == 0:
        raise Invalid("The uri must be an absolute http or https URI.", f"{path}.uri")
    if "@" in uri.split("//", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]:
        # Credentials in the URI would be stored and shown in the clear: they belong in `authentication`.
        raise Invalid("The uri must not carry user information (user:password@); use authentication.", f"{path}.uri")
    if not _TOKEN.fullmatch(request.method):
        raise Invalid("The method must be an HTTP method name such as GET or POST.", f"{path}.method")
    validate_headers(request.headers or {}, f"{path}.headers")
    if request.authentication is not None:
        validate_authentication(request.authentication, f"{path}.authentication")


def _validate_queue_text(text: str | None, path: str) -> None:
    bad = _NOT_XML_CHAR.search(text) if text else None
    if bad is not None:
        raise Invalid(
            f"The message holds U+{ord(bad.group()):04X} at offset {bad.start()}, which the XML "
            "envelope of a storage queue message cannot carry.",
            path,
        )


def _validate_service_bus(message: ServiceBusMessage, member: str, entity: str | None, path: str) -> None:
    """A Service Bus message names its namespace and its entity (`member`: queueName or topicPath)."""
    if not message.namespace:
        raise Invalid("namespace is required.", f"{path}.namespace")
    if not entity:
        raise Invalid(f"{member} is required.", f"{path}.{member}")


def validate_action(action: JobErrorAction | None, path: str, now: datetime) -> None:
    if action is None:
        raise Invalid("A job needs an action.", path)
    _validate_target(action, path)
    if action.request is not None:
        _validate_request(action.request, f"{path}.request")
    if action.queue_message is not None:
        _validate_queue_text(action.queue_message.message, f"{path}.queueMessage.message")
    if (queue := action.service_bus_queue_message) is not None:
        _validate_service_bus(queue, "queueName", queue.queue_name, f"{path}.serviceBusQueueMessage")
    if (topic := action.service_bus_topic_message) is not None:
        _validate_service_bus(topic, "topicPath", topic.topic_path, f"{path}.serviceBusTopicMessage")
    validate_retry(action.retry_policy, f"{path}.retryPolicy", now)


def effective_start(properties: JobProperties, now: datetime, kept: datetime | None = None) -> datetime:
    """startTime, else `kept` (the anchor of a job that had no startTime before either), else the creation
    instant (docs/decisions.md). Without a startTime, an endTime already past anchors the job there instead, so
    it is created Completed rather than rejected as ending before it starts."""
    if properties.start_time is not None:
        return properties.start_time
    anchor = kept if kept is not None else now
    end = properties.recurrence.end_time if properties.recurrence is not None else None
    return min(anchor, end) if end is not None else anchor


def validate_job(properties: JobProperties, now: datetime, kept: datetime | None = None) -> OccurrenceSeries | None:
    """InvalidDefinition unless the job is acceptable on its own; its occurrence series (None for a one-shot),
    from effective_start(properties, now, kept)."""
    validate_action(properties.action, "properties.action", now)
    assert properties.action is not None
    if properties.action.error_action is not None:
        validate_action(properties.action.error_action, "properties.action.errorAction", now)
    start = properties.start_time
    if start is not None and start - now > horizon(now):
        raise Invalid("startTime must be at most 18 months ahead.", "properties.startTime")
    within = properties.expect_success_within
    if within is not None and not MIN_EXPECTATION <= within <= horizon(now):
        # Checked after every dispatcher tick: a shorter one could not be told from a tick's own delay.
        raise Invalid("expectSuccessWithin must be from 1 minute to 18 months.", "properties.expectSuccessWithin")
    recurrence = properties.recurrence
    if recurrence is None:
        validate_spread(properties.spread_window, None)
        return None
    if recurrence.end_time is not None and start is not None and recurrence.end_time < start:
        raise Invalid("endTime must not be before startTime.", "properties.recurrence.endTime")
    try:
        series = OccurrenceSeries(effective_start(properties, now, kept), engine_recurrence(recurrence))
    except RecurrenceError as exc:
        raise Invalid(exc.message, f"properties.recurrence.{exc.path}".rstrip(".")) from exc
    validate_spread(properties.spread_window, series.min_gap() if recurrence.count != 1 else None)
    return series


def validate_spread(window: timedelta | None, shortest_gap: timedelta | None) -> None:
    """spreadWindow (extension): from PT1S to PT1H, and no longer than the job's shortest gap between two
    occurrences, so an occurrence never fires after the next one's nominal time."""
    if window is None:
        return
    if not SPREAD_MIN <= window <= SPREAD_MAX:
        raise Invalid("spreadWindow must be from 1 second (PT1S) to 1 hour (PT1H).", "properties.spreadWindow")
    if shortest_gap is not None and window > shortest_gap:
        raise Invalid(
            f"spreadWindow must not be longer than the job's shortest interval between two occurrences "
            f"({format_duration(shortest_gap)}).",
            "properties.spreadWindow",
        )
