"""Table queries: one page sent through the SDK's own request and pipeline, its answer read here.

Why by hand: py-spy on the host at 100 executions/s put 23 % of its CPU in table queries (the executor reads the
jobs of every batch, the dispatcher its due rows). About a third of that was the SDK turning each page's JSON into
its generated `TableEntityQueryResponse` model with its generic deserializer (every row walked as a dict of
objects), then the model into entities, each Timestamp parsed for metadata the store drops, under the pager's
and tracer's wrappers per page. Here the request is the SDK's (its generated request builder, run through the
table client's pipeline as its generated query runs it: authentication, retries, the pooled transport, azure-core's
JSON decoder), and each row is converted as the SDK's `_convert_to_entity` converts it, with the SDK's own type
table (so Edm.DateTime goes through entity_datetimes' converter when it is installed).
tests/store/test_entity_query.py holds rows, pages, continuations and errors equal to the SDK's, on generated rows
and on a real Azurite.

An entity is a plain dict with its `etag`; the continuation is the SDK's (a dict of the next PartitionKey and
RowKey, JSON-safe), None after the last page. Errors are raised as the SDK raises them (`_process_table_error`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ResourceNotModifiedError,
    map_error,
)
from azure.core.tracing.decorator import distributed_trace
from azure.data.tables import EdmType, EntityProperty, TableClient
from azure.data.tables._deserialize import _ENTITY_TO_PYTHON_CONVERSIONS, _extract_continuation_token
from azure.data.tables._error import _process_table_error
from azure.data.tables._generated.operations._operations import build_table_query_entities_request
from azure.data.tables._serialize import _parameter_filter_substitution

from .tables import Entity

Continuation = dict[str, Any]

# As the generated `TableOperations.query_entities` maps statuses before the SDK decodes the error.
_ERROR_MAP = {
    401: ClientAuthenticationError,
    404: ResourceNotFoundError,
    409: ResourceExistsError,
    304: ResourceNotModifiedError,
}
_INT32 = range(-(2**31), 2**31)
_RAW = (EdmType.STRING, EdmType.INT32)
_KEYS = ("PartitionKey", "RowKey")


@distributed_trace(name_of_span="TableClient.query_entities")  # the span the SDK's pager makes per page
def query_page(
    client: TableClient,
    query_filter: str,
    parameters: dict[str, Any] | None = None,
    select: list[str] | None = None,
    size: int | None = None,
    continuation: Continuation | None = None,
) -> tuple[list[Entity], Continuation | None]:
    """One page of at most `size` entities (the service's 1,000 when None) matching the filter, from
    `continuation` (None: the first page), and the continuation of the next page."""
    generated = client._client  # private: the generated client whose query the SDK runs, and its configuration
    next_partition, next_row = _extract_continuation_token(continuation)
    request = build_table_query_entities_request(
        table=client.table_name,
        top=size,
        select=",".join(select) if select else None,
        filter=_parameter_filter_substitution(parameters, query_filter),
        next_partition_key=next_partition,
        next_row_key=next_row,
        version=generated._config.version,
    )
    # Run as the SDK's generated query runs it: not streamed, so the answer is read whole and azure-core's content
    # decoder parses its JSON once. A streamed answer would be read in 4 KiB blocks, each a trip through the GIL:
    # under load, a 1,000-row page then waited on the other threads.
    request.url = generated._client.format_url(request.url, url=generated._config.url)
    answered = generated._client._pipeline.run(request, stream=False)
    response = answered.http_response
    if response.status_code != 200:
        try:
            map_error(status_code=response.status_code, response=response, error_map=_ERROR_MAP)
            raise HttpResponseError(response=response)
        except HttpResponseError as error:
            _process_table_error(error, table_name=None)
    rows = [entity_of(element) for element in answered.context["deserialized_data"]["value"]]
    headers = response.headers
    partition, row = headers.get("x-ms-continuation-NextPartitionKey"), headers.get("x-ms-continuation-NextRowKey")
    return rows, ({"PartitionKey": partition, "RowKey": row} if partition or row else None)


def entity_of(element: dict[str, Any]) -> Entity:
    """A row of the answer as the SDK's `_convert_to_entity` reads it, as a dict, with its `etag`."""
    found: Entity = {}
    types: dict[str, str] = {}
    wide: list[str] = []
    etag = timestamp = None
    for name, value in element.items():
        if name.startswith("odata."):
            if name == "odata.etag":
                etag = value
        elif name.endswith("@odata.type"):
            types[name[:-11]] = value
        elif name == "Timestamp":
            timestamp = value  # the SDK keeps it as metadata only
        elif name in _KEYS:
            if value is not None:
                found[name] = value
        else:
            found[name] = value
            if isinstance(value, int) and value not in _INT32:
                wide.append(name)
    # Second, as the SDK does: an annotation applies wherever it stands among the row's members.
    for name, kind in types.items():
        if name in found and name not in _KEYS and kind not in _RAW:
            convert: Any = _ENTITY_TO_PYTHON_CONVERSIONS.get(kind)  # type: ignore[call-overload]
            # The SDK's fallback for a type it has no converter for, arguments in its order.
            found[name] = convert(found[name]) if convert else EntityProperty(kind, found[name])
    for name in wide:
        if name not in types:
            found[name] = EntityProperty(int(found[name]), EdmType.INT64)  # the SDK's Int64 converter
    if timestamp and not etag:
        etag = "W/\"datetime'" + quote(timestamp) + "'\""
    found["etag"] = etag
    return found
