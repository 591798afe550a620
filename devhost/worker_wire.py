"""What crosses the boundary between the local host and its worker processes (workers.py, worker_process.py).

Contract: trigger values and results cross as plain data (builtins, bytes, datetimes: what pickles without
importing the app), and are rebuilt on the other side as the same azure.functions objects the in-process path
hands over, so a function cannot tell where it runs:
- `trigger_to_plain(kind, value)` / `trigger_from_plain(plain)`: an HTTP request (method, URL, headers, query,
  route values, body), a queue message (id, body, dequeue count, times, pop receipt), a timer's request
  (past_due, schedule status, schedule).
- `result_to_plain(value)` / `result_from_plain(plain)`: a `func.HttpResponse` keeps status, every header (repeats
  too), MIME type, charset and body; None stays None; anything else comes back as an object of a class with the
  same name, so the front end's "must return func.HttpResponse, not X" reads as it does in-process.
- `error_to_plain(error)` / `error_from_plain(plain)`: the exception itself when it pickles both ways, else a
  `WorkerFunctionError` carrying its type and message (the traceback was logged in the worker).
- `record_to_plain(record)`: a log record whose message is already formatted (no args, traceback as text), so
  the host's handlers print it as they print their own; `logging.makeLogRecord` rebuilds it.
"""

from __future__ import annotations

import logging
import pickle
from typing import Any

import azure.functions as func
from azure.functions.queue import QueueMessage
from azure.functions.timer import TimerRequest

from devhost.indexing import HTTP_TRIGGER, QUEUE_TRIGGER, TIMER_TRIGGER

Plain = tuple[str, dict[str, Any]]
_FORMATTER = logging.Formatter()
_PRIMITIVE = (str, int, float, bool, type(None))


class WorkerFunctionError(RuntimeError):
    """A function failed in a worker process with an exception that cannot cross the boundary itself."""


def trigger_to_plain(kind: str, value: Any) -> Plain:
    if kind == HTTP_TRIGGER:
        return kind, {
            "method": value.method,
            "url": value.url,
            "headers": dict(value.headers.items()),
            "params": dict(value.params),
            "route_params": dict(value.route_params),
            "body": value.get_body(),
        }
    if kind == QUEUE_TRIGGER:
        return kind, {
            "id": value.id,
            "body": value.get_body(),
            "dequeue_count": value.dequeue_count,
            "expiration_time": value.expiration_time,
            "insertion_time": value.insertion_time,
            "time_next_visible": value.time_next_visible,
            "pop_receipt": value.pop_receipt,
        }
    if kind == TIMER_TRIGGER:
        return kind, {"past_due": value.past_due, "schedule_status": value.schedule_status, "schedule": value.schedule}
    raise ValueError(f"no plain form for trigger {kind!r}")


def trigger_from_plain(plain: Plain) -> Any:
    kind, data = plain
    if kind == HTTP_TRIGGER:
        return func.HttpRequest(
            data["method"],
            data["url"],
            headers=data["headers"],
            params=data["params"],
            route_params=data["route_params"],
            body=data["body"],
        )
    if kind == QUEUE_TRIGGER:
        return QueueMessage(**data)
    if kind == TIMER_TRIGGER:
        return TimerRequest(**data)
    raise ValueError(f"no plain form for trigger {kind!r}")


def result_to_plain(value: Any) -> Plain | None:
    if value is None:
        return None
    if isinstance(value, func.HttpResponse):
        return "http", {
            "body": value.get_body(),
            "status_code": value.status_code,
            "headers": list(value.headers.items()),
            "mimetype": value.mimetype,
            "charset": value.charset,
        }
    return "other", {"type": type(value).__name__}


def result_from_plain(plain: Plain | None) -> Any:
    if plain is None:
        return None
    kind, data = plain
    if kind == "http":
        response = func.HttpResponse(
            data["body"], status_code=data["status_code"], mimetype=data["mimetype"], charset=data["charset"]
        )
        for name, value in data["headers"]:
            response.headers.add_header(name, value)
        return response
    # Only HTTP functions' results are used; any other keeps its type's name for the front end's message.
    return type(data["type"], (), {})()


def error_to_plain(error: BaseException) -> bytes:
    try:
        data = pickle.dumps(error)
        pickle.loads(data)  # some exceptions pickle but cannot be rebuilt (a custom __init__)
    except Exception:
        data = pickle.dumps(WorkerFunctionError(f"{type(error).__qualname__}: {error}"))
    return data


def error_from_plain(data: bytes) -> BaseException:
    error = pickle.loads(data)
    assert isinstance(error, BaseException)
    return error


def record_to_plain(record: logging.LogRecord) -> dict[str, Any]:
    plain = {key: value if isinstance(value, _PRIMITIVE) else str(value) for key, value in vars(record).items()}
    plain["msg"], plain["args"] = record.getMessage(), None
    if record.exc_info and not record.exc_text:
        plain["exc_text"] = _FORMATTER.formatException(record.exc_info)
    plain["exc_info"] = None
    plain.pop("message", None)
    return plain
