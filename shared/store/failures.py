"""What a failed storage call means to its caller: whether storage may have applied it, and whether it is a
passing fault that a retry outlives (an outage, a cut answer, a race) rather than a bug.

Contract:
- `answer_lost(error)`: the request reached storage and its answer never arrived whole, so storage may have
  applied it: azure-core's `ServiceResponseError` (a reset or a timeout after the request was sent), an
  `HttpResponseError` without a status (a body cut mid-stream: `IncompleteReadError`, a broken chunked
  transfer), an answer the SDK could not read (`DeserializationError`: a header cut part-way, "Date: Sat, "),
  a transport error azure-core let through unwrapped (requests', urllib3's, the socket's: when it came cannot
  be told, so it counts as after), or what the SDK raised while handling one of those. A write
  that failed so is read back before anything is decided from it (lifecycle/writes.py). `ServiceRequestError`
  (no connection: nothing was sent) is not a lost answer.
- `passing(error)`: the API answers it 503 with Retry-After (api/http.py): storage unreachable or unanswering
  (`ServiceRequestError`, `ServiceResponseError`, an answer lost as above, azure-core's bare `AzureError` when
  its retries ran out), storage's own 5xx, 408 and 429, and a write that met a row changed under it and was not
  resolved by its caller (`ConcurrencyError`, `BatchFailed`, a 409 or 412 from storage): under lost answers
  that is usually the storage client's repeat of a write whose first answer was lost, finding the row it wrote
  itself, and the client's repeat of the whole request (an idempotent PUT, PATCH or DELETE) settles it. What
  storage refuses otherwise (400, 403, 404 of a missing table, 413) is a request we should not have made: not
  passing, a 500.
"""

from __future__ import annotations

import requests
import urllib3
from azure.core.exceptions import (
    AzureError,
    DeserializationError,
    HttpResponseError,
    ServiceRequestError,
    ServiceResponseError,
)

from .tables import BatchFailed, ConcurrencyError

# What the transport under azure-core raises when it does not wrap it (a stream read outside its own guards).
_UNWRAPPED = (requests.RequestException, urllib3.exceptions.HTTPError, ConnectionError, TimeoutError)

# Storage's statuses that a retry outlives: timeout, a write meeting a row it did not expect (409, 412), throttling.
_PASSING_STATUSES = frozenset({408, 409, 412, 429})


def answer_lost(error: BaseException) -> bool:
    """The request reached storage and its answer did not come back whole: storage may have applied it."""
    if isinstance(error, (ServiceResponseError, DeserializationError, *_UNWRAPPED)):
        return True
    if isinstance(error, HttpResponseError) and error.status_code is None:
        return True
    # azure-data-tables decodes a failed write's error from its answer, and fails so (AttributeError) on an
    # answer cut short, which has none: the error it raised while handling the lost answer is that answer's.
    handled = error.__cause__ or error.__context__
    return handled is not None and _raised_in_the_sdk(error) and answer_lost(handled)


def _raised_in_the_sdk(error: BaseException) -> bool:
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and str(frame.tb_frame.f_globals.get("__name__", "")).startswith("azure.")


def passing(error: BaseException) -> bool:
    """A fault of storage or of a race that the client's retry outlives (503 with Retry-After), not a bug."""
    if isinstance(error, ConcurrencyError | BatchFailed | ServiceRequestError) or answer_lost(error):
        return True
    if isinstance(error, HttpResponseError):
        status = error.status_code or 0
        return status >= 500 or status in _PASSING_STATUSES
    return type(error) is AzureError  # azure-core's own "Maximum retries exceeded", with no answer at all
