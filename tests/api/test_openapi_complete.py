"""Both OpenAPI documents say exactly what their api-version serves, and nothing else (issue 38, major 7).

- Routes: every operation of the table (the routes function_app.py binds, tests/api/test_operation_table.py) is
  at its path and method in the documents of the api-versions that serve it, and the documents hold nothing
  else. 2016-03-01's holds the 15 operations of the published spec; the newest every operation, those served
  beside the api-versions (role assignments with Microsoft.Authorization's api-versions, health, the documents)
  included.
- Parameters and headers: what an operation's handler reads of its request (found in the source,
  tests/support/request_reads.py) is what the newest document lists for it: api-version, every query parameter,
  every header, a request body exactly where it reads one (its Content-Type); and nothing it does not read.
  2016-03-01's document lists the same less what only the newer version serves, and a real 2016-03-01 request
  with any of those is refused (400 naming the newer version), as are the newer operations; a write that
  documents no what-if refuses one (400 WhatIfNotSupported).
- Answers: each status the table lists, with its body's schema; the dry-run answer of each write that has one;
  the ARM error shape for every error (503 with Retry-After); every schema referred to is there.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import requests

from shared.api.openapi import header_parameters, in_document, openapi_document, query_parameters
from shared.api.operations import OPENAPI_ROUTES, OPERATIONS, Operation
from shared.model.versions import NEWEST, STABLE, VERSIONS
from tests.api.conftest import ApiServer
from tests.support.request_reads import request_reads

DOCUMENTS = {version: openapi_document(f"/api/{route}") for route, version in OPENAPI_ROUTES.items()}
NEWER = NEWEST.name
SPEC_OPERATIONS = {  # Microsoft.Scheduler's published 2016-03-01 spec (docs/wire-contract.md §1.2)
    "JobCollections_ListBySubscription",
    "JobCollections_ListByResourceGroup",
    "JobCollections_Get",
    "JobCollections_CreateOrUpdate",
    "JobCollections_Patch",
    "JobCollections_Delete",
    "JobCollections_Enable",
    "JobCollections_Disable",
    "Jobs_Get",
    "Jobs_CreateOrUpdate",
    "Jobs_Patch",
    "Jobs_Delete",
    "Jobs_Run",
    "Jobs_List",
    "Jobs_ListJobHistory",
}
# A value each newer-only parameter may take; count and from shape a what-if's answer, so they go with whatIf.
NEWER_VALUES = {"overlapPolicy": "Skip", "whatIf": "true", "x-ms-what-if": "true", "count": "3", "from": "2026-01-01"}


def _documented(version: str, op: Operation) -> dict[str, Any]:
    return DOCUMENTS[version]["paths"][op.path][op.method.lower()]


def _listed(operation: dict[str, Any]) -> set[str]:
    """What the document says the operation reads: query parameters and headers (lower case) by name, and the
    body's Content-Type."""
    names = {
        p["name"] if p["in"] == "query" else p["name"].lower() for p in operation["parameters"] if p["in"] != "path"
    }
    return names | ({"content-type"} if "requestBody" in operation else set())


def test_each_document_holds_exactly_the_operations_its_version_serves() -> None:
    for version, document in DOCUMENTS.items():
        listed = {(path, method.upper()) for path, methods in document["paths"].items() for method in methods}
        served = {(op.path, op.method) for op in OPERATIONS if in_document(op, VERSIONS[version])}
        assert listed == served, version
        ids = [op["operationId"] for methods in document["paths"].values() for op in methods.values()]
        assert len(ids) == len(set(ids)), version
    stable = {op["operationId"] for methods in DOCUMENTS[STABLE]["paths"].values() for op in methods.values()}
    assert stable == SPEC_OPERATIONS
    newest = {(op.path, op.method) for op in OPERATIONS}
    assert {(p, m.upper()) for p, methods in DOCUMENTS[NEWER]["paths"].items() for m in methods} == newest


def test_the_newest_document_lists_exactly_what_each_handler_reads() -> None:
    differences = {}
    for op in OPERATIONS:
        read = request_reads(op.handler) if op.handler is not None else set()
        listed = _listed(_documented(NEWER, op))
        if read != listed:
            differences[op.operation_id or op.name] = {
                "read, not listed": read - listed,
                "listed, not read": listed - read,
            }
    assert differences == {}


def test_the_2016_document_lists_what_each_handler_reads_less_the_newer_versions() -> None:
    newer_only = {}
    for op in (op for op in OPERATIONS if in_document(op, VERSIONS[STABLE])):
        newest = set(query_parameters(op, NEWEST)) | set(header_parameters(op, NEWEST))
        older = set(query_parameters(op, VERSIONS[STABLE])) | set(header_parameters(op, VERSIONS[STABLE]))
        newer_only[op.name] = newest - older
        assert _listed(_documented(STABLE, op)) == request_reads(op.handler) - newer_only[op.name], op.name
    assert {name: sorted(found) for name, found in newer_only.items() if found} == {
        "JobCollections_CreateOrUpdate": ["whatIf", "x-ms-what-if"],
        "JobCollections_Patch": ["whatIf", "x-ms-what-if"],
        "Jobs_CreateOrUpdate": ["count", "from", "whatIf", "x-ms-what-if"],
        "Jobs_Patch": ["count", "from", "whatIf", "x-ms-what-if"],
        "Jobs_Delete": ["whatIf", "x-ms-what-if"],
        "Jobs_Run": ["overlapPolicy"],
    }


def _url(server: ApiServer, op: Operation) -> str:
    names = {"roleAssignmentName": "0d2ab2a4-8c1e-4d0e-9a57-2a7a1c3c0001"}
    return server.url + re.sub(r"\{(\w+)\}", lambda m: names.get(m.group(1), "left-out"), op.path)


def _send(server: ApiServer, op: Operation, version: str | None, **given: str) -> requests.Response:
    headers = {k: v for k, v in given.items() if k.startswith("x-ms-")}
    query = {k: v for k, v in given.items() if k not in headers} | ({"api-version": version} if version else {})
    body = json.dumps({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}) if op.body else None
    return requests.request(op.method, _url(server, op), params=query, data=body, headers=headers, timeout=30)


@pytest.mark.parametrize(
    "op", [op for op in OPERATIONS if not in_document(op, VERSIONS[STABLE])], ids=lambda op: op.operation_id or op.name
)
def test_2016_refuses_each_operation_its_document_leaves_out(api_server: ApiServer, op: Operation) -> None:
    if op.api_versions == ():  # health and the documents take no api-version: beside every version
        assert _send(api_server, op, None).status_code in (200, 503)  # health: 503 while the dispatcher is behind
        return
    refused = _send(api_server, op, STABLE)
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "MissingOrInvalidRequiredQueryParameter"
    if op.api_versions is None:  # ours: the message names the version that has it
        assert NEWER in refused.json()["error"]["message"]


def test_2016_refuses_each_parameter_its_document_leaves_out(api_server: ApiServer) -> None:
    tried = 0
    for op in (op for op in OPERATIONS if in_document(op, VERSIONS[STABLE])):
        for name in set(query_parameters(op, NEWEST)) - set(query_parameters(op, VERSIONS[STABLE])) | set(
            header_parameters(op, NEWEST)
        ):
            given = {name: NEWER_VALUES[name]} | ({"whatIf": "true"} if name in ("count", "from") else {})
            refused = _send(api_server, op, STABLE, **given)
            assert refused.status_code == 400, (op.name, name, refused.text)
            assert NEWER in refused.json()["error"]["message"], (op.name, name)
            tried += 1
    assert tried == 15


def test_a_write_that_documents_no_what_if_refuses_one(api_server: ApiServer) -> None:
    writes = [op for op in OPERATIONS if op.method != "GET" and op.handler is not None and op.what_if is None]
    for op in writes:
        assert "whatIf" not in {p["name"] for p in _documented(NEWER, op)["parameters"]}
        version = NEWER if op.api_versions is None else op.api_versions[0]
        refused = _send(api_server, op, version, **{"x-ms-what-if": "true"})
        assert (refused.status_code, refused.json()["error"]["code"]) == (400, "WhatIfNotSupported"), op.name
    # run, collection delete, enable, disable; role assignment PUT and DELETE at 3 scopes; dead letters' replay
    # (one, many) and purge (one, all)
    assert len(writes) == 14


def _refs(node: Any) -> set[str]:
    text = json.dumps(node)
    return set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', text))


def test_every_answer_is_described_with_its_schema_and_errors_in_the_arm_shape() -> None:
    for version, document in DOCUMENTS.items():
        schemas = document["components"]["schemas"]
        assert _refs(document) <= set(schemas), version
        for op in (op for op in OPERATIONS if in_document(op, VERSIONS[version])):
            answers = _documented(version, op)["responses"]
            for status, model in op.responses.items():
                assert ("content" in answers[status]) == (model is not None), (version, op.name, status)
                if model is not None:
                    assert model.__name__ in _refs(answers[status]["content"]), (version, op.name, status)
            assert _refs(answers["default"]) == {"ErrorResponse"}
            if op.handler is not None:
                assert _refs(answers["503"]) == {"ErrorResponse"} and "Retry-After" in answers["503"]["headers"]
            dry = _documented(version, op).get("x-what-if-answer")
            if version == NEWER and op.what_if is not None:
                assert dry == {"$ref": f"#/components/schemas/{op.what_if.__name__}"}, op.name
                if op.responses["200"] is not None:  # the 200's body is the write's or the dry run's
                    assert op.what_if.__name__ in _refs(answers["200"]["content"])
            else:
                assert dry is None, (version, op.name)
