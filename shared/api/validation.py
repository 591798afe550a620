"""Rules a job must satisfy beyond the shape of its JSON: action/target consistency and the recurrence.

Each rule raises a 400 whose message names the property path. Issue 3 adds SKU quotas, limits and
the remaining cross-field rules here.
"""

from __future__ import annotations

from datetime import datetime

from ..errors import bad_request
from ..model import JobActionType, JobErrorAction, JobProperties
from ..planning import engine_recurrence
from ..recurrence import OccurrenceSeries, RecurrenceError

_TARGET_FIELD = {
    JobActionType.HTTP: "request",
    JobActionType.HTTPS: "request",
    JobActionType.STORAGE_QUEUE: "queueMessage",
    JobActionType.SERVICE_BUS_QUEUE: "serviceBusQueueMessage",
    JobActionType.SERVICE_BUS_TOPIC: "serviceBusTopicMessage",
}


def validate_action(action: JobErrorAction | None, path: str) -> None:
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
        if not uri.lower().startswith(("http://", "https://")):
            raise bad_request("The uri must be an absolute http or https URI.", f"{path}.request.uri")


def validate_job(properties: JobProperties, now: datetime) -> None:
    validate_action(properties.action, "properties.action")
    assert properties.action is not None
    if properties.action.error_action is not None:
        validate_action(properties.action.error_action, "properties.action.errorAction")
    recurrence = properties.recurrence
    if recurrence is not None:
        start = properties.start_time
        if recurrence.end_time is not None and start is not None and recurrence.end_time < start:
            raise bad_request("endTime must not be before startTime.", "properties.recurrence.endTime")
        try:
            OccurrenceSeries(start or now, engine_recurrence(recurrence))
        except RecurrenceError as exc:
            raise bad_request(exc.message, f"properties.recurrence.{exc.path}") from exc

