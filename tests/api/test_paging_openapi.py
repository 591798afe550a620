"""Paging across many jobs (keyset cursors, absolute nextLink), and the served OpenAPI document."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlsplit

from shared.api.openapi import openapi_document
from shared.keys import CollectionKey
from shared.model import JobProperties, JobState
from shared.records import JobRecord


def test_pages_through_many_jobs(inproc) -> None:
    inproc.put_collection("big", sku="P20Premium")
    start = datetime.now(UTC) + timedelta(days=1)
    properties = JobProperties.model_validate(
        {
            "startTime": start.isoformat(),
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        }
    )
    collection = CollectionKey(inproc.SUB, inproc.RG, "big")
    for i in range(1234):  # written to the store directly: the API's write path is tested elsewhere
        inproc.rt.store.jobs.insert(
            JobRecord(
                key=collection.job(f"job{i:05d}"),
                properties=properties,
                state=JobState.DISABLED if i % 10 == 0 else JobState.ENABLED,
            )
        )
    seen, query, pages = [], {"api-version": "2016-03-01", "$filter": "state eq 'Enabled'"}, 0
    while True:
        page = inproc.call("Jobs_List", "GET", "big", query=query, suffix="/jobs")
        assert page.status == 200, page.body
        seen += [j["name"] for j in page.body["value"]]
        pages += 1
        link = page.body["nextLink"]
        if link is None:
            break
        parts = urlsplit(link)
        assert parts.scheme == "http" and parts.path.endswith("/jobCollections/big/jobs")
        query = dict(parse_qsl(parts.query))
        assert query["api-version"] == "2016-03-01" and query["$filter"] == "state eq 'Enabled'"
    expected = [f"big/job{i:05d}" for i in range(1234) if i % 10]
    assert seen == expected and pages == 12
    skipped = inproc.call("Jobs_List", "GET", "big", query={"api-version": "2016-03-01", "$skip": "1200", "$top": "20"})
    assert [j["name"] for j in skipped.body["value"]] == [f"big/job{i:05d}" for i in range(1200, 1220)]
    assert skipped.body["nextLink"] is None  # $top caps the list: no link beyond it
    paged = inproc.call("Jobs_List", "GET", "big", query={"api-version": "2016-03-01", "$skip": "1100"})
    assert len(paged.body["value"]) == 100
    rest = dict(parse_qsl(urlsplit(paged.body["nextLink"]).query))
    assert "$skip" not in rest and "$top" not in rest
    last = inproc.call("Jobs_List", "GET", "big", query=rest, suffix="/jobs")
    assert len(last.body["value"]) == 34 and last.body["nextLink"] is None
    beyond = inproc.call("Jobs_List", "GET", "big", query={"api-version": "2016-03-01", "$skip": "5000"})
    assert beyond.body == {"value": [], "nextLink": None}


def test_openapi_document_is_served_and_complete(api_server) -> None:
    with urllib.request.urlopen(f"{api_server.url}/openapi.json") as response:
        assert response.status == 200
        document = json.load(response)
    assert document["openapi"].startswith("3.")
    operations = {op["operationId"] for path in document["paths"].values() for op in path.values()}
    assert len(operations) == 15
    assert document["servers"] == [{"url": api_server.url}]
    text = json.dumps(document)
    schemas = document["components"]["schemas"]
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in schemas, ref
    listing = document["paths"][
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Scheduler/"
        "jobCollections/{jobCollectionName}/jobs"
    ]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"api-version", "$top", "$skip", "$filter"}
    # Generated from the validating models: the request model's bounds are in the document.
    hours = schemas["JobRecurrenceSchedule"]["properties"]["hours"]["anyOf"][0]["items"]
    assert (hours["minimum"], hours["maximum"]) == (0, 23)
    assert openapi_document()["servers"] == [{"url": "/api"}]
