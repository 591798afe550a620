"""Schema-driven fuzzing: bodies generated from the schemas of our served OpenAPI document, plus hand-made
mutations. Whatever comes in: no 5xx, and a rejected write leaves the store as it was.

`from_schema` covers the JSON Schema subset pydantic emits for our models ($ref, anyOf, enum, objects,
arrays, maps, bounded integers, date-time/duration strings); hypothesis-jsonschema does not work with
current hypothesis releases.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import api

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


def _schema(name: str) -> dict[str, Any]:
    """One component of the served document as a standalone JSON Schema (refs moved to $defs)."""
    document = api.handle("OpenApi_Get", api.ApiRequest("GET", "http://h/api/openapi.json", {}, {})).body
    text = json.dumps(document["components"]["schemas"]).replace("#/components/schemas/", "#/$defs/")
    return {"$ref": f"#/$defs/{name}", "$defs": json.loads(text)}


_INSTANTS = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
_FORMATS = {
    "date-time": _INSTANTS.map(lambda t: t.isoformat()) | st.sampled_from(["2026-13-01T00:00:00Z", "yesterday"]),
    "duration": st.sampled_from(["PT30S", "PT15S", "PT1M", "00:01:00", "1.00:00:00", "P1D", "PT5S", "P900D", "x"]),
}


def from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return st.deferred(lambda: from_schema(root["$defs"][name], root))
    if "anyOf" in schema:
        return st.one_of([from_schema(option, root) for option in schema["anyOf"]])
    if "enum" in schema:
        values = schema["enum"]
        return st.sampled_from(values) | st.sampled_from(values).map(str.lower)
    kind = schema.get("type")
    if kind == "object":
        if "properties" not in schema:
            return st.dictionaries(st.text(max_size=6), st.text(max_size=8), max_size=3)
        required = set(schema.get("required", ()))
        members = {k: from_schema(v, root) for k, v in schema["properties"].items()}
        return st.fixed_dictionaries(
            {k: v for k, v in members.items() if k in required},
            optional={k: v for k, v in members.items() if k not in required},
        )
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), root), max_size=4)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**31)) - 1, schema.get("maximum", 2**31) + 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "string":
        return _FORMATS.get(schema.get("format", ""), st.text(max_size=16))
    return JSON


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)

_START = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
_VALID = {
    "properties": {
        "startTime": _START,
        "action": {
            "type": "Http",
            "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 2},
        },
        "recurrence": {"frequency": "Hour", "interval": 2, "schedule": {"minutes": [5]}},
    }
}


@st.composite
def mutated_job(draw: st.DrawFn) -> dict[str, Any]:
    """The valid job with one member, at any depth, replaced by arbitrary JSON (or removed)."""
    body = json.loads(json.dumps(_VALID))
    node = body
    while True:
        key = draw(st.sampled_from(sorted(node)))
        if isinstance(node[key], dict) and draw(st.booleans()):
            node = node[key]
            continue
        if draw(st.integers(0, 4)) == 0:
            del node[key]
        else:
            node[key] = draw(JSON)
        return body


def _snapshot(inproc) -> Any:
    jobs = inproc.call("Jobs_List", "GET", "jc").body
    return [(j["name"], j["properties"]) for j in jobs["value"]]


def _check_write(inproc, operation: str, method: str, body: Any, job: str = "j") -> None:
    before = _snapshot(inproc)
    response = inproc.call(operation, method, "jc", job, raw=json.dumps(body).encode())
    assert response.status < 500, response.body
    if response.status >= 400:
        assert set(response.body) == {"error"} and response.body["error"]["message"]
        assert _snapshot(inproc) == before


@pytest.fixture
def fuzz_target(inproc):
    inproc.put_collection(quota={"maxJobCount": 50})
    inproc.put_job("jc", "j", _VALID)
    return inproc


@FUZZ
@given(body=from_schema(_schema("JobDefinition")))
def test_schema_generated_jobs(fuzz_target, body) -> None:
    _check_write(fuzz_target, "Jobs_CreateOrUpdate", "PUT", body)
    _check_write(fuzz_target, "Jobs_Patch", "PATCH", body)


@FUZZ
@given(body=mutated_job())
def test_mutated_jobs(fuzz_target, body) -> None:
    _check_write(fuzz_target, "Jobs_CreateOrUpdate", "PUT", body, job="m")
    _check_write(fuzz_target, "Jobs_Patch", "PATCH", body)


@FUZZ
@given(
    body=from_schema(_schema("JobCollectionDefinition")),
    query=st.dictionaries(
        st.sampled_from(["$top", "$skip", "$filter", "$skiptoken"]), st.text(max_size=20), max_size=3
    ),
)
def test_collections_and_queries(fuzz_target, body, query) -> None:
    before = fuzz_target.call("JobCollections_Get", "GET", "jc").body
    for method, operation in (("PUT", "JobCollections_CreateOrUpdate"), ("PATCH", "JobCollections_Patch")):
        response = fuzz_target.call(operation, method, "jc", raw=json.dumps(body).encode())
        assert response.status < 500, response.body
        if response.status >= 400:
            assert fuzz_target.call("JobCollections_Get", "GET", "jc").body == before
        else:
            before = response.body
    listed = fuzz_target.call("Jobs_List", "GET", "jc", query={"api-version": "2016-03-01", **query})
    assert listed.status in (200, 400, 404), listed.body
