"""Rules a job must satisfy beyond the shape of its JSON: action/target consistency, authentication,
retry bounds, startTime/endTime and the recurrence.

Each rule raises a 400 whose message names the property path. Plan and quota rules (409) live in
quotas.py; state rules, which need the stored job, in job_writes.py.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from ..actions.framing import is_framing_header
from ..actions.oauth import valid_tenant
from ..errors import bad_request
from ..model import (
    HttpAuthentication,
    HttpAuthenticationType,
    JobActionType,
    JobErrorAction,
    JobProperties,
    RetryPolicy,
)
from ..planning import engine_recurrence
from ..recurrence import OccurrenceSeries, RecurrenceError
from .calendar import add_months

_TARGET_FIELD = {
    JobActionType.HTTP: "request",
    JobActionType.HTTPS: "request",
    JobActionType.STORAGE_QUEUE: "queueMessage",
    JobActionType.SERVICE_BUS_QUEUE: "serviceBusQueueMessage",
    JobActionType.SERVICE_BUS_TOPIC: "serviceBusTopicMessage",
}

# Characters XML 1.0 cannot carry (its `Char` production): a queue message holding one would make the
# StorageQueue envelope unparseable for every consumer (a lone surrogate cannot even be sent).
_NOT_XML_CHAR = re.compile(r"[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

MIN_RETRY_INTERVAL = timedelta(seconds=15)
HORIZON_MONTHS = 18  # "Time to start time: max 18 months"; also the longest retry interval

_REQUIRED_AUTH = {
    HttpAuthenticationType.BASIC: ("username", "password"),
    HttpAuthenticationType.CLIENT_CERTIFICATE: ("pfx", "password"),
    HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH: ("tenant", "audience", "clientId", "secret"),
}


def validate_authentication(auth: HttpAuthentication, path: str) -> None:
    if auth.type == HttpAuthenticationType.ACTIVE_DIRECTORY_OAUTH and auth.tenant and not valid_tenant(auth.tenant):
        raise bad_request("The tenant must be a tenant id (GUID) or a domain name such as contoso.onmicrosoft.com.",
                          f"{path}.tenant")
    required = _REQUIRED_AUTH.get(auth.type, ())
    values = auth.model_dump(by_alias=True, context={"with_secrets": True})
    missing = [name for name in required if not values.get(name)]
    if not missing:
        return
    if auth.type == HttpAuthenticationType.BASIC:  # the real service's message (docs/wire-contract.md Q16)
        raise bad_request("'Username' and 'Password' are required for 'Basic' type of Authentication.", path)
    raise bad_request(f"{', '.join(missing)} required for '{auth.type.value}' authentication.",
                      f"{path}.{missing[0]}")


def validate_retry(policy: RetryPolicy | None, path: str, now: datetime) -> None:
    if policy is None:
        return
    longest = add_months(now, HORIZON_MONTHS) - now
    for name, value in (("retryInterval", policy.retry_interval), ("maxRetryInterval", policy.max_retry_interval)):
        if value is not None and not MIN_RETRY_INTERVAL <= value <= longest:
            raise bad_request(f"{name} must be from 15 seconds to 18 months.", f"{path}.{name}")


# RFC 9110 token (method and header names); header values: visible Latin-1 and spaces, no CR/LF.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


def validate_headers(headers: dict[str, str], path: str) -> None:
    """Headers the action could never send are rejected now, rather than failing every run later."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise bad_request("A header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~).",
                              f"{path}.{name!r}")
        if is_framing_header(name):
            raise bad_request(f"The header '{name}' is set by the scheduler's HTTP client; hop-by-hop and framing "
                              "headers (Transfer-Encoding, Content-Length, Connection, Host, Upgrade, TE, Trailer, "
                              "Keep-Alive, Proxy-*) cannot be set by a job.", f"{path}.{name}")
        if not _HEADER_VALUE.fullmatch(value):
            raise bad_request("A header value cannot hold line breaks, control characters or characters "
                              "beyond Latin-1.", f"{path}.{name}")


def validate_action(action: JobErrorAction | None, path: str, now: datetime) -> None:
    if action is None:
        raise bad_request("A job needs an action.", path)
    field = _TARGET_FIELD[action.type]
    present = {name for name, attr in (("request", action.request), ("queueMessage", action.queue_message),
                                       ("serviceBusQueueMessage", action.service_bus_queue_message),
                                       ("serviceBusTopicMessage", action.service_bus_topic_message)) if attr}
    if field not in present:
        raise bad_request(f"An action of type {action.type.value} needs '{field}'.", f"{path}.{field}")
    if present - {field}:
        other = sorted(present - {field})[0]
        raise bad_request(f"An action of type {action.type.value} cannot have '{other}'.", f"{path}.{other}")
    if action.request is not None:
        uri = action.request.uri
        if not uri.lower().startswith(("http://", "https://")) or len(uri.split("//", 1)[1]) == 0:
            raise bad_request("The uri must be an absolute http or https URI.", f"{path}.request.uri")
        if "@" in uri.split("//", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]:
            # Credentials in the URI would be stored and shown in the clear: they belong in `authentication`.
            raise bad_request("The uri must not carry user information (user:password@); use authentication.",
                              f"{path}.request.uri")
        if not _TOKEN.fullmatch(action.request.method):
            raise bad_request("The method must be an HTTP method name such as GET or POST.", f"{path}.request.method")
        validate_headers(action.request.headers or {}, f"{path}.request.headers")
        if action.request.authentication is not None:
            validate_authentication(action.request.authentication, f"{path}.request.authentication")
    queue_text = action.queue_message.message if action.queue_message is not None else None
    bad = _NOT_XML_CHAR.search(queue_text) if queue_text else None
    if bad is not None:
        raise bad_request(f"The message holds U+{ord(bad.group()):04X} at offset {bad.start()}, which the XML "
                          "envelope of a storage queue message cannot carry.", f"{path}.queueMessage.message")
    for name, message in (("serviceBusQueueMessage", action.service_bus_queue_message),
                          ("serviceBusTopicMessage", action.service_bus_topic_message)):
        member = "queueName" if name == "serviceBusQueueMessage" else "topicPath"
        if message is not None and not message.namespace:
            raise bad_request("namespace is required.", f"{path}.{name}.namespace")
        if message is not None and not getattr(message, "queue_name" if member == "queueName" else "topic_path"):
            raise bad_request(f"{member} is required.", f"{path}.{name}.{member}")
    validate_retry(action.retry_policy, f"{path}.retryPolicy", now)


def effective_start(properties: JobProperties, now: datetime) -> datetime:
    """startTime, else the creation instant (docs/decisions.md). Without a startTime, an endTime already past
    anchors the job there instead, so it is created Completed rather than rejected as ending before it starts."""
    if properties.start_time is not None:
        return properties.start_time
    end = properties.recurrence.end_time if properties.recurrence is not None else None
    return min(now, end) if end is not None else now


def validate_job(properties: JobProperties, now: datetime) -> OccurrenceSeries | None:
    """400 unless the job is acceptable on its own; returns its occurrence series (None for a one-shot)."""
    validate_action(properties.action, "properties.action", now)
    assert properties.action is not None
    if properties.action.error_action is not None:
        validate_action(properties.action.error_action, "properties.action.errorAction", now)
    start = properties.start_time
    if start is not None and start > add_months(now, HORIZON_MONTHS):
        raise bad_request("startTime must be at most 18 months ahead.", "properties.startTime")
    recurrence = properties.recurrence
    if recurrence is None:
        return None
    if recurrence.end_time is not None and start is not None and recurrence.end_time < start:
        raise bad_request("endTime must not be before startTime.", "properties.recurrence.endTime")
    try:
        return OccurrenceSeries(effective_start(properties, now), engine_recurrence(recurrence))
    except RecurrenceError as exc:
        raise bad_request(exc.message, f"properties.recurrence.{exc.path}".rstrip(".")) from exc
