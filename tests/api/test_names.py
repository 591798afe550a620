"""Subscription and resource-group segments follow ARM's rules; names compare by ASCII case only."""

from __future__ import annotations

import logging

import pytest

from tests.api.conftest import InProcess

BAD_SUBSCRIPTIONS = ["s" * 91, "sub\u0085", "sub\x00", "sub\nINFO forged line", "sub/x", "sub\u212a", "", "sub id"]
BAD_GROUPS = ["g" * 91, "rg\u0085", "rg\u009f", "rg\x00", "rg\r\nINFO forged", "rg/x", "rg.", "rg#", "rg name", ""]


@pytest.mark.parametrize("subscription", BAD_SUBSCRIPTIONS)
def test_each_bad_subscription_is_a_400_on_every_operation(inproc: InProcess, subscription: str) -> None:
    for operation, method, collection in (
        ("JobCollections_ListBySubscription", "GET", None),
        ("JobCollections_Get", "GET", "jc"),
        ("JobCollections_CreateOrUpdate", "PUT", "jc"),
    ):
        response = inproc.call(
            operation,
            method,
            collection,
            subscription=subscription,
            body={"location": "westus"} if method == "PUT" else None,
        )
        assert response.status == 400, (operation, response.body)
        assert response.body["error"]["code"] == "InvalidSubscriptionId"
        assert subscription not in response.body["error"]["message"] or not subscription


@pytest.mark.parametrize("group", BAD_GROUPS)
def test_each_bad_resource_group_is_a_400_and_never_echoed(inproc: InProcess, group: str) -> None:
    for operation, method, collection in (
        ("JobCollections_ListByResourceGroup", "GET", None),
        ("JobCollections_CreateOrUpdate", "PUT", "jc"),
        ("Jobs_Get", "GET", "jc"),
    ):
        response = inproc.call(
            operation,
            method,
            collection,
            job="j1" if operation == "Jobs_Get" else None,
            group=group,
            body={"location": "westus"} if method == "PUT" else None,
        )
        assert response.status == 400, (operation, response.body)
        assert response.body["error"]["code"] == "InvalidResourceGroup"
        assert not group or group not in response.body["error"]["message"]


@pytest.mark.parametrize("group", ["rg-1", "RG_(x).y", "g" * 90, "Gruppe-\u00e4\u00f6\u00fc", "\u212aelvin"])
def test_names_arm_accepts_are_accepted(inproc: InProcess, group: str) -> None:
    response = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", group=group, body={"location": "westus"})
    assert response.status == 201, response.body
    assert inproc.call("JobCollections_Get", "GET", "jc", group=group).status == 200


def test_the_kelvin_sign_does_not_alias_the_letter_k(inproc: InProcess) -> None:
    """U+212A lower-cases to 'k' in Unicode; ARM compares ordinally ignoring ASCII case, so these are two groups."""
    kelvin, plain = "\u212aelvin", "kelvin"
    assert (
        inproc.call(
            "JobCollections_CreateOrUpdate",
            "PUT",
            "jc",
            group=kelvin,
            body={"location": "westus", "tags": {"who": "kelvin-sign"}},
        ).status
        == 201
    )
    assert inproc.call("JobCollections_Get", "GET", "jc", group=plain).status == 404
    assert (
        inproc.call(
            "JobCollections_CreateOrUpdate",
            "PUT",
            "jc",
            group=plain,
            body={"location": "westus", "tags": {"who": "ascii"}},
        ).status
        == 201
    )  # created, not replaced
    assert inproc.call("JobCollections_Get", "GET", "jc", group=kelvin).body["tags"] == {"who": "kelvin-sign"}
    # ASCII letters still ignore case.
    assert inproc.call("JobCollections_Get", "GET", "jc", group="KELVIN").body["tags"] == {"who": "ascii"}


@pytest.mark.parametrize("name", ["jc\n", "jc\u212a", "j" * 101, "1jc"])
def test_collection_and_job_names_are_matched_whole(inproc: InProcess, name: str) -> None:
    """A trailing line break used to pass a `^...$` match."""
    assert inproc.call("JobCollections_CreateOrUpdate", "PUT", name, body={"location": "westus"}).status == 400
    inproc.put_collection("jc")
    assert inproc.put_job("jc", name, inproc.http_job(), expect=400).body["error"]["code"] == "BadRequest"


def test_an_unhandled_error_never_logs_the_raw_url(inproc: InProcess, caplog: pytest.LogCaptureFixture) -> None:
    from shared import api

    def explode(rt: object, request: api.ApiRequest) -> api.ApiResponse:
        raise RuntimeError("boom")

    request = api.ApiRequest("GET", "http://h/api/subscriptions/x%0AINFO%20forged", {}, {})
    with caplog.at_level(logging.ERROR):
        response = api.http.run_operation(lambda req: explode(None, req), request, "Jobs_Get")
    assert response.status == 500
    assert "forged" not in caplog.text and "Jobs_Get" in caplog.text
