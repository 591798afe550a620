"""The service's refusals as the SDK raises them: azure-core errors carrying the HTTP status and error code
(what callers read: `status_code`, `error_code`), so the memory store fails where and as Table Storage and
Storage queues fail."""

from __future__ import annotations

from typing import TypeVar

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError

E = TypeVar("E", bound=HttpResponseError)


def refused(kind: type[E], status: int, code: str, message: str) -> E:
    """An error of `kind` as the SDK makes it of an answer with `status` and `code`."""
    error = kind(message=f"{message}\nErrorCode:{code}")
    error.status_code = status
    error.error_code = code  # type: ignore[attr-defined]  # azure-core declares none; the storage SDKs add it
    return error


def bad_request(code: str, message: str) -> HttpResponseError:
    return refused(HttpResponseError, 400, code, message)


def table_not_found() -> ResourceNotFoundError:
    return refused(ResourceNotFoundError, 404, "TableNotFound", "The table specified does not exist.")


def queue_not_found() -> ResourceNotFoundError:
    return refused(ResourceNotFoundError, 404, "QueueNotFound", "The specified queue does not exist.")


def message_not_found() -> ResourceNotFoundError:
    return refused(ResourceNotFoundError, 404, "MessageNotFound", "The specified message does not exist.")


def exists(code: str, message: str) -> ResourceExistsError:
    return refused(ResourceExistsError, 409, code, message)


def too_large(what: str) -> HttpResponseError:
    return refused(HttpResponseError, 413, "RequestBodyTooLarge", f"The request body is too large: {what}.")
