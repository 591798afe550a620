"""What the API's boundary (shared/api/http.py `run_operation`) answers for each failure a storage call raises:
503 with Retry-After for every passing fault (shared/store/failures.py), 500 only for what storage refuses as a
request we should not have made, or a bug; and the log names the operation and the error's type, never its text.

The errors are built as azure-core and the SDKs raise them (a broken chunked transfer, an incomplete body, a reset
after the request was sent, the tables SDK failing to decode an error from a cut answer), and made for real: a
list's answer cut by the fault proxy inside its body, and inside its headers.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator

import pytest
from azure.core.exceptions import (
    AzureError,
    DeserializationError,
    HttpResponseError,
    IncompleteReadError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.data.tables._error import _decode_error
from requests.exceptions import ChunkedEncodingError
from requests.exceptions import ConnectionError as RequestsConnectionError
from urllib3.exceptions import ProtocolError

from devhost.azurite import Azurite
from shared import api
from shared.api import ApiRequest, ApiResponse
from shared.api.http import run_operation
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store import ConcurrencyError
from shared.store.tables import BatchFailed
from shared.store.transaction import TransactionRefused
from tests.support.fault_proxy import StorageFaults
from tests.support.scheduler_client import RG, SUB, call

REQUEST = ApiRequest("GET", "http://127.0.0.1/api/x", {}, {})
SECRET = "name-from-the-caller\r\nforged log line"


def _status(message: str, status: int, kind: type[HttpResponseError] = HttpResponseError) -> HttpResponseError:
    """An error as storage's answer of `status` raises it (azure-core takes the status from the response)."""
    error = kind(message=message)
    error.status_code = status
    return error


def _decoded_without_an_answer() -> Exception:
    """What azure-data-tables raises for a write whose answer was cut: it decodes the storage error from the
    answer, which a cut one does not have (AttributeError, raised in the SDK while handling the cut)."""
    try:
        try:
            raise IncompleteReadError(ChunkedEncodingError(f"IncompleteRead {SECRET}"))
        except HttpResponseError as cut:
            _decode_error(cut.response, cut.message)
    except AttributeError as error:
        return error
    raise AssertionError("the SDK decoded an error from no answer")


def _answer(error: Exception) -> ApiResponse:
    def failing(_: ApiRequest) -> ApiResponse:
        raise error

    return run_operation(failing, REQUEST, "Jobs_Get")


def _ours_while_handling() -> Exception:
    try:
        try:
            raise ServiceResponseError("connection reset")
        except ServiceResponseError:
            return {}["missing"]  # type: ignore[no-any-return]
    except KeyError as error:
        return error


PASSING = {
    "no connection": ServiceRequestError(f"connection refused {SECRET}"),
    "reset after the request was sent": ServiceResponseError(f"connection reset {SECRET}"),
    "read timeout": ServiceResponseTimeoutError(f"read timed out {SECRET}"),
    # What azure-core raises when a body is cut mid-stream: no status, as no whole answer came.
    "body cut (chunked)": HttpResponseError(ChunkedEncodingError(f"Connection broken {SECRET}")),
    "body cut (length)": IncompleteReadError(ChunkedEncodingError(f"IncompleteRead {SECRET}")),
    "retries ran out": AzureError("Maximum retries exceeded."),
    "the SDK failing on a cut answer": _decoded_without_an_answer(),
    "a header cut part-way": DeserializationError(f"Unable to deserialize response data. Data: Sat, {SECRET}"),
    # The transport's own errors, should one get past azure-core's wrapping.
    "unwrapped requests error": RequestsConnectionError(f"Connection aborted {SECRET}"),
    "unwrapped urllib3 error": ProtocolError(f"Connection broken {SECRET}"),
    "unwrapped socket reset": ConnectionResetError(104, f"Connection reset by peer {SECRET}"),
    "storage busy": _status(f"ServerBusy {SECRET}", 503),
    "storage timed out": _status(f"OperationTimedOut {SECRET}", 500),
    "throttled": _status(f"TooManyRequests {SECRET}", 429),
    # A write's repeat meeting the row its lost first try wrote, left to the boundary.
    "exists on repeat": _status(f"EntityAlreadyExists {SECRET}", 409, ResourceExistsError),
    "changed on repeat": _status(f"UpdateConditionNotSatisfied {SECRET}", 412, ResourceModifiedError),
    "transaction refused 409": TransactionRefused(0, 409, "EntityAlreadyExists", SECRET),
    "kept changing": ConcurrencyError(f"job {SECRET} kept changing"),
    "transaction met a missing row": BatchFailed(SECRET),
}
BUGS = {
    "storage refused the request": _status(f"InvalidInput {SECRET}", 400),
    "missing table": _status(f"TableNotFound {SECRET}", 404, ResourceNotFoundError),
    "a bug of ours": KeyError(SECRET),
    "a bug of ours while handling a lost answer": _ours_while_handling(),
}


@pytest.mark.parametrize("error", PASSING.values(), ids=PASSING.keys())
def test_a_passing_storage_fault_is_503_with_retry_after_and_logs_no_input(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        answer = _answer(error)
    assert answer.status == 503, answer.body
    assert answer.body["error"]["code"] == "ServiceUnavailable"
    assert int(answer.headers["Retry-After"]) > 0
    assert SECRET not in caplog.text and "name-from-the-caller" not in caplog.text
    assert f"storage unavailable in Jobs_Get: {type(error).__name__}" in caplog.text


@pytest.mark.parametrize("error", BUGS.values(), ids=BUGS.keys())
def test_what_is_not_a_passing_fault_stays_a_500_without_a_trace_out(error: Exception) -> None:
    answer = _answer(error)
    assert answer.status == 500
    assert answer.body == {
        "error": {"code": "InternalError", "message": "The server encountered an internal error. Please retry."}
    }
    assert "Retry-After" not in answer.headers


@pytest.fixture
def faults(azurite: Azurite) -> Iterator[StorageFaults]:
    proxied = StorageFaults(azurite.connection_string, seed=11)
    yield proxied
    proxied.close()


def _proxied(settings: Settings, faults: StorageFaults) -> Runtime:
    return Runtime.create(
        dataclasses.replace(settings, storage=StorageSettings(connection_string=faults.connection_string))
    )


@pytest.mark.parametrize(
    ("cut_after", "errors"),
    [(16384, ("IncompleteReadError", "HttpResponseError")), (200, ("ServiceResponseError",))],
    ids=["mid-body", "mid-headers"],
)
def test_a_read_whose_answer_is_cut_short_is_503_not_500(
    settings: Settings, faults: StorageFaults, caplog: pytest.LogCaptureFixture, cut_after: int, errors: tuple[str]
) -> None:
    """Eight collections of 50 long tags list as an answer of about 120 KB, which the proxy cuts after its first
    `cut_after` bytes every time: inside the body, the storage client gives up after its retries with an error
    that has no status (an IncompleteReadError, or a broken chunked transfer); inside the headers, http.client
    takes the close for their end, and the transport tells such an answer from a whole one (store/clients.py)."""
    rt = _proxied(settings, faults)
    tags = {f"tag{n:02d}": "v" * 256 for n in range(50)}
    body = {"location": "West US", "tags": tags, "properties": {"sku": {"name": "Standard"}}}
    for n in range(8):
        assert call(rt, "JobCollections_CreateOrUpdate", "PUT", body=body, collection=f"c{n}").status == 201
    listing = {"subscriptionId": SUB, "resourceGroupName": RG}
    url = f"http://127.0.0.1/api/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Scheduler/jobCollections"
    request = ApiRequest("GET", url, listing, {"api-version": "2016-03-01"})
    faults.set_mode("cut", cut_after=cut_after)
    with caplog.at_level(logging.WARNING):
        answer = api.handle("JobCollections_ListByResourceGroup", request, rt)
    faults.set_mode("pass")
    assert answer.status == 503, answer.body
    assert int(answer.headers["Retry-After"]) > 0
    said = [r.message for r in caplog.records if r.message.startswith("storage unavailable in JobCollections_List")]
    assert said and said[0].endswith(tuple(f": {error}" for error in errors)), said
    assert len(api.handle("JobCollections_ListByResourceGroup", request, rt).body["value"]) == 8
