"""Entity-group transactions ($batch): the multipart envelope written and read here rather than by azure-core.

Why by hand: azure-core builds a transaction's multipart/mixed body with the `email` package's message
generator and parses the answer with its parser again, header by header through `email`'s header registry.
py-spy on the host at 100 executions/s put 38 % of its CPU there, more than every action of the load; the
scheduler sends a transaction for nearly every step (claims, history, jobs, the due index). What is written
here is the envelope only, the OData batch format of the Table service REST API ("Performing entity group
transactions"): one changeset of the sub-requests, each an `application/http` part; the answer is the same
shape, one `HTTP/1.1` response per sub-request, or the single response of the one that failed. The
sub-requests are written as the SDK writes them (transaction_parts.py, held equal to the SDK's by a test), and
the outer request goes through the client's own pipeline (authentication, retries, the pooled transport), exactly
as `TableClient.submit_transaction` sends it.

`submit` answers the ETag of every operation, in order. A refused transaction (nothing of it was done) raises
`TransactionRefused`, carrying the index of the operation that failed and its status, as the SDK's
`TableTransactionError` does; a refused request as a whole raises the azure-core error of its status.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable

from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.core.rest import HttpRequest
from azure.data.tables import TableClient

from .transaction_parts import Operation, Part, parts_of

MAX_OPERATIONS = 100  # the service refuses a transaction of more (all in one partition, each row once)

_BOUNDARY = re.compile(rb'boundary="?([^";\r\n]+)"?', re.IGNORECASE)
_BY_STATUS: dict[int, type[HttpResponseError]] = {
    404: ResourceNotFoundError,
    409: ResourceExistsError,
    412: ResourceModifiedError,
}


class TransactionRefused(HttpResponseError):
    """The service refused operation `index` of a transaction, so it did nothing of it."""

    def __init__(self, index: int, status: int, code: str | None, message: str) -> None:
        super().__init__(message=f"operation {index} of the transaction: {status} {code}: {message}")
        self.index = index
        self.status_code = status
        self.error_code = code


def submit(client: TableClient, operations: Iterable[Operation]) -> list[str | None]:
    """Send the operations (one partition's) as one entity-group transaction: the ETag each answered."""
    base_url = f"{client.scheme}://{client._primary_hostname}"  # private: as submit_transaction builds it
    parts = parts_of(base_url, client.table_name, client.api_version, operations)
    batch, changeset = f"batch_{uuid.uuid4()}", f"changeset_{uuid.uuid4()}"
    request = HttpRequest(
        "POST",
        f"{base_url}/$batch",
        headers={
            "x-ms-version": client.api_version,
            "DataServiceVersion": "3.0",
            "MaxDataServiceVersion": "3.0;NetFx",
            "Content-Type": f"multipart/mixed; boundary={batch}",
            "Accept": "application/json",
        },
        content=envelope(parts, batch, changeset),
    )
    # The client's own pipeline, as the SDK sends it; streamed, or its content decoder refuses multipart.
    response = client._client.send_request(request, stream=True)
    try:
        body = response.read()
    finally:
        response.close()
    if response.status_code != 202:
        raise _BY_STATUS.get(response.status_code, HttpResponseError)(response=response)
    answers = responses(body, response.headers.get("Content-Type", ""))
    for status, headers, body in answers:
        if not 200 <= status < 300:
            raise _refused(status, headers, body)
    if len(answers) != len(parts):
        raise HttpResponseError(
            message=f"the transaction answered {len(answers)} parts for {len(parts)} operations",
            response=response,
        )
    return [headers.get("etag") for _, headers, _ in answers]


def envelope(parts: list[Part], batch: str, changeset: str) -> bytes:
    """The multipart/mixed body of one changeset holding the sub-requests, each an application/http part."""
    out = [f"--{batch}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n".encode()]
    for index, part in enumerate(parts):
        head = [
            f"--{changeset}",
            "Content-Type: application/http",
            "Content-Transfer-Encoding: binary",
            f"Content-ID: {index}",
            "",
            f"{part.method} {part.url} HTTP/1.1",
            *(f"{name}: {value}" for name, value in part.headers),
            "",
            "",
        ]
        out.append("\r\n".join(head).encode())
        if part.body:
            out.append(part.body)
        out.append(b"\r\n")
    out.append(f"--{changeset}--\r\n--{batch}--\r\n".encode())
    return b"".join(out)


Answer = tuple[int, dict[str, str], bytes]  # a sub-request's status, headers (lower-cased names) and body


def responses(body: bytes, content_type: str) -> list[Answer]:
    """Each sub-request's answer in a $batch response body, in order."""
    found = _BOUNDARY.search(content_type.encode())
    if found is None:
        raise HttpResponseError(message=f"a $batch answer without a multipart boundary: {content_type!r}")
    answers: list[Answer] = []
    for part in _parts(body, found.group(1)):
        headers, inner = _split(part)
        inner_boundary = _BOUNDARY.search(headers.get("content-type", "").encode())
        if inner_boundary is not None:  # the changeset's answers
            answers.extend(_http(p) for p in _parts(inner, inner_boundary.group(1)))
        else:  # an answer standing alone in the batch (the service answers a bad changeset so)
            answers.append(_http(part))
    return answers


def _parts(body: bytes, boundary: bytes) -> list[bytes]:
    """The body parts between the boundary's delimiters (the preamble and the close delimiter left out)."""
    pieces = body.split(b"--" + boundary)
    return [piece.lstrip(b"\r\n") for piece in pieces[1:] if not piece.startswith(b"--")]


def _split(part: bytes) -> tuple[dict[str, str], bytes]:
    """A MIME part's (or an HTTP message's) headers, by lower-cased name, and its body."""
    head, _, rest = part.replace(b"\r\n", b"\n").partition(b"\n\n")
    headers: dict[str, str] = {}
    for line in head.decode("utf-8", "replace").split("\n"):
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return headers, rest


def _http(part: bytes) -> Answer:
    """An application/http part: the status, headers and body of the HTTP response it holds."""
    _, message = _split(part)
    status_line, _, rest = message.partition(b"\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        raise HttpResponseError(message=f"a $batch answer part without a status line: {status_line[:80]!r}") from None
    headers, body = _split(rest)
    return status, headers, body.rstrip(b"\n")


def _refused(status: int, headers: dict[str, str], body: bytes) -> TransactionRefused:
    """The error of the failed sub-request: its index is the prefix of the service's message ("3:...")."""
    code, message = headers.get("x-ms-error-code"), body.decode("utf-8", "replace")
    try:
        error = json.loads(body)["odata.error"]
        code, message = error.get("code", code), error["message"]["value"]
    except (ValueError, KeyError, TypeError):
        pass
    prefix = message.split(":", 1)[0]
    return TransactionRefused(int(prefix) if prefix.isdigit() else 0, status, code, message)
