"""Every rejection is an ARM error naming the property path, and a rejected write changes nothing."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12
from cryptography.x509.oid import NameOID

HOOK = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def job(**properties):
    return {"properties": {"action": dict(HOOK), **properties}}


def later(**delta) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).replace(microsecond=0).isoformat()


BAD_JOBS = [
    (
        job(recurrence={"frequency": "Day", "schedule": {"hours": [1, 2, 25]}}),
        "properties.recurrence.schedule.hours[2]",
    ),
    (job(recurrence={"frequency": "Week", "schedule": {"monthDays": [1]}}), "properties.recurrence.schedule.monthDays"),
    (job(recurrence={"frequency": "Day", "interval": 549}), "properties.recurrence.interval"),
    (
        job(recurrence={"frequency": "Month", "schedule": {"monthDays": [0]}}),
        "properties.recurrence.schedule.monthDays[0]",
    ),
    (
        job(
            recurrence={"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Friday", "Occurrence": 6}]}}
        ),
        "properties.recurrence.schedule.monthlyOccurrences[0].Occurrence",
    ),
    (job(recurrence={"frequency": "Fortnight"}), "properties.recurrence.frequency"),
    (
        job(startTime=later(days=10), recurrence={"frequency": "Day", "endTime": later(days=1)}),
        "properties.recurrence.endTime",
    ),
    (job(startTime=later(days=600)), "properties.startTime"),
    (
        {"properties": {"action": {**HOOK, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT5S"}}}},
        "properties.action.retryPolicy.retryInterval",
    ),
    (
        {"properties": {"action": {**HOOK, "retryPolicy": {"retryType": "Fixed", "retryInterval": "P600D"}}}},
        "properties.action.retryPolicy.retryInterval",
    ),
    (
        {"properties": {"action": {**HOOK, "retryPolicy": {"retryType": "Fixed", "retryCount": 21}}}},
        "properties.action.retryPolicy.retryCount",
    ),
    (
        {"properties": {"action": {"type": "StorageQueue", "request": HOOK["request"]}}},
        "properties.action.queueMessage",
    ),
    (
        {"properties": {"action": {**HOOK, "queueMessage": {"storageAccount": "a", "queueName": "q"}}}},
        "properties.action.queueMessage",
    ),
    ({"properties": {"action": {**HOOK, "errorAction": {"type": "Http"}}}}, "properties.action.errorAction.request"),
    (
        {"properties": {"action": {"type": "Http", "request": {"uri": "ftp://x/", "method": "GET"}}}},
        "properties.action.request.uri",
    ),
    (
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {
                        "uri": "http://x/",
                        "method": "GET",
                        "authentication": {"type": "Basic", "username": "u"},
                    },
                }
            }
        },
        "'Username' and 'Password' are required",
    ),
    (
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {
                        "uri": "http://x/",
                        "method": "GET",
                        "authentication": {"type": "ClientCertificate", "pfx": "not base64!", "password": "p"},
                    },
                }
            }
        },
        "properties.action.request.authentication.pfx",
    ),
    (
        {"properties": {"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"queueName": "q"}}}},
        "properties.action.serviceBusQueueMessage.namespace",
    ),
    (job(state="Completed"), "properties.state"),
    ({"properties": {}}, "properties.action"),
    ({"properties": "x"}, "properties"),
]


@pytest.mark.parametrize(("body", "path"), BAD_JOBS, ids=[p for _, p in BAD_JOBS])
def test_bad_jobs_are_400_naming_the_path_and_store_nothing(inproc, body, path) -> None:
    inproc.put_collection()
    original = inproc.put_job("jc", "j", job(startTime=later(hours=3))).body
    for method, operation in (("PUT", "Jobs_CreateOrUpdate"), ("PATCH", "Jobs_Patch")):
        response = inproc.call(operation, method, "jc", "j", body=body)
        if operation == "Jobs_Patch" and body == {"properties": {}}:
            assert response.status == 200  # an empty patch is valid
            continue
        assert response.status == 400, (method, response.body)
        assert response.body["error"]["code"] == "BadRequest"
        assert path in response.body["error"]["message"], response.body
        assert inproc.get_job("jc", "j").body == original
    assert inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", "other", body=body).status == 400
    assert inproc.get_job("jc", "other").status == 404


def test_malformed_requests(inproc) -> None:
    inproc.put_collection()
    cases = [
        (dict(raw=b'{"properties": '), "BadRequest"),
        (dict(raw=b"[1, 2]"), "BadRequest"),
        (dict(raw=b"\xff\xfe"), "BadRequest"),
        (
            dict(
                raw=b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET", '
                b'"body": "' + b"x" * 16_001 + b'"}}}}'
            ),
            "BadRequest",
        ),
        (dict(body=job(), query={}), "MissingOrInvalidRequiredQueryParameter"),
        (dict(body=job(), query={"api-version": "2099-01-01"}), "MissingOrInvalidRequiredQueryParameter"),
    ]
    for kwargs, code in cases:
        response = inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", "j", **kwargs)
        assert response.status == 400 and response.body["error"]["code"] == code, response.body
        assert "Traceback" not in response.body["error"]["message"]
    assert inproc.call("Jobs_CreateOrUpdate", "PUT", "jc", "bad~name", body=job()).status == 400
    assert inproc.get_job("jc", "j").status == 404


def test_list_parameters(inproc) -> None:
    inproc.put_collection()
    inproc.put_job("jc", "j", job(startTime=later(hours=3)))
    v = {"api-version": "2016-03-01"}
    for query, name in (
        ({"$top": "0"}, "$top"),
        ({"$top": "101"}, "$top"),
        ({"$skip": "-1"}, "$skip"),
        ({"$filter": "state ne 'Enabled'"}, "$filter"),
        ({"$filter": "state eq 'Running'"}, "$filter"),
        ({"$filter": "status eq 'Failed'"}, "$filter"),
        ({"$skiptoken": "!!"}, "$skiptoken"),
    ):
        response = inproc.call("Jobs_List", "GET", "jc", query={**v, **query})
        assert response.status == 400 and name in response.body["error"]["message"], (query, response.body)
    for text in ("state eq 'Enabled'", "STATE EQ enabled", "state eq 'enabled'"):
        listed = inproc.call("Jobs_List", "GET", "jc", query={**v, "$filter": text})
        assert [j["name"] for j in listed.body["value"]] == ["jc/j"]
    assert inproc.call("Jobs_List", "GET", "jc", query={**v, "$filter": "state eq Disabled"}).body["value"] == []
    history = inproc.call("Jobs_ListJobHistory", "GET", "jc", "j", query={**v, "$filter": "status eq 'failed'"})
    assert history.status == 200 and history.body == {"value": [], "nextLink": None}
    bad = inproc.call("Jobs_ListJobHistory", "GET", "jc", "j", query={**v, "$filter": "state eq 'Enabled'"})
    assert bad.status == 400


def test_free_plan_limits(inproc) -> None:
    inproc.put_collection("free", sku="Free")
    second = inproc.put_collection("free2", sku="Free", expect=409)
    assert second.body["error"]["code"] == "Conflict"
    minutely = inproc.put_job("free", "fast", job(recurrence={"frequency": "Minute", "interval": 30}), expect=409)
    assert "properties.recurrence" in minutely.body["error"]["message"]
    # Hourly by frequency but four times an hour by schedule: the expanded schedule counts.
    expanded = job(recurrence={"frequency": "Hour", "schedule": {"minutes": [0, 15, 30, 45]}})
    assert inproc.put_job("free", "expanded", expanded, expect=409).status == 409
    auth = {
        "properties": {
            "action": {
                "type": "Https",
                "request": {
                    "uri": "https://x/",
                    "method": "GET",
                    "authentication": {"type": "Basic", "username": "u", "password": "p"},
                },
            }
        }
    }
    refused = inproc.put_job("free", "auth", auth, expect=409)
    assert "properties.action.request.authentication" in refused.body["error"]["message"]
    for i in range(5):
        inproc.put_job("free", f"j{i}", job(startTime=later(hours=3), recurrence={"frequency": "Hour"}))
    assert inproc.put_job("free", "sixth", job(startTime=later(hours=3)), expect=409).status == 409
    assert inproc.put_job("free", "j0", job(startTime=later(hours=4)), expect=200).status == 200  # a replace fits
    for name in ("fast", "expanded", "auth", "sixth"):
        assert inproc.get_job("free", name).status == 404


def test_quota_tightens_the_plan_and_downgrade_is_checked(inproc) -> None:
    inproc.put_collection("jc", quota={"maxJobCount": 2, "maxRecurrence": {"frequency": "Hour", "interval": 2}})
    assert inproc.put_job("jc", "hourly", job(recurrence={"frequency": "Hour"}), expect=409).status == 409
    inproc.put_job("jc", "a", job(startTime=later(hours=3), recurrence={"frequency": "Hour", "interval": 2}))
    inproc.put_job("jc", "b", job(startTime=later(hours=3), recurrence={"frequency": "Minute", "interval": 180}))
    assert inproc.put_job("jc", "c", job(startTime=later(hours=3)), expect=409).status == 409
    inproc.put_collection("std", expect=201)
    inproc.put_job("std", "minutely", job(startTime=later(hours=3), recurrence={"frequency": "Minute"}))
    downgrade = inproc.call("JobCollections_Patch", "PATCH", "std", body={"properties": {"sku": {"name": "Free"}}})
    assert downgrade.status == 409 and "minutely" in downgrade.body["error"]["message"]
    assert inproc.call("JobCollections_Get", "GET", "std").body["properties"]["sku"] == {"name": "Standard"}
    tighter = inproc.call("JobCollections_Patch", "PATCH", "jc", body={"properties": {"quota": {"maxJobCount": 1}}})
    assert tighter.status == 409


def test_collection_rules(inproc) -> None:
    cases = [
        ({"location": "westus", "properties": {"state": "Deleted"}}, "properties.state"),
        ({"location": "westus", "properties": {"sku": {"name": "Gold"}}}, "properties.sku.name"),
        ({"location": "westus", "properties": {"quota": {"maxJobCount": 0}}}, "properties.quota.maxJobCount"),
        (
            {"location": "westus", "properties": {"quota": {"maxRecurrence": {"interval": 1}}}},
            "properties.quota.maxRecurrence.frequency",
        ),
        ({"name": "other", "location": "westus"}, "name"),
    ]
    for body, path in cases:
        response = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", body=body)
        assert response.status == 400 and path in response.body["error"]["message"], response.body
    assert inproc.call("JobCollections_Get", "GET", "jc").status == 404
    created = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", body={"location": "northeurope"})
    assert created.status == 201 and created.body["location"] == "North Europe"
    assert created.body["properties"] == {"sku": {"name": "Standard"}, "state": "Enabled"}
    moved = inproc.call("JobCollections_CreateOrUpdate", "PUT", "jc", body={"location": "westus"})
    assert moved.status == 400 and "location" in moved.body["error"]["message"]


def test_states_and_run(inproc) -> None:
    inproc.put_collection()
    past = inproc.put_job(
        "jc", "past", job(startTime=later(days=-10), recurrence={"frequency": "Day", "endTime": later(days=-2)})
    )
    assert past.body["properties"]["state"] == "completed"
    assert "nextExecutionTime" not in past.body["properties"]["status"]
    for body in (job(state="Enabled"), {"properties": {"state": "Disabled"}}):
        operation = "Jobs_CreateOrUpdate" if "action" in body["properties"] else "Jobs_Patch"
        method = "PUT" if operation == "Jobs_CreateOrUpdate" else "PATCH"
        refused = inproc.call(operation, method, "jc", "past", body=body)
        assert refused.status == 409 and refused.body["error"]["code"] == "Conflict"
    assert inproc.call("Jobs_Run", "POST", "jc", "past").status == 409
    disabled = inproc.put_job("jc", "off", job(startTime=later(hours=1), state="Disabled"))
    assert disabled.body["properties"]["state"] == "disabled" and "status" not in disabled.body["properties"]
    assert inproc.call("Jobs_Run", "POST", "jc", "off").status == 200
    assert inproc.call("Jobs_Run", "POST", "jc", "missing").status == 404
    suspended = inproc.call("JobCollections_Patch", "PATCH", "jc", body={"properties": {"state": "Suspended"}})
    assert suspended.body["properties"]["state"] == "Suspended"
    assert inproc.get_job("jc", "off").body["properties"]["state"] == "disabled"  # job states untouched


def test_patch_merges_and_keeps_secrets(inproc) -> None:
    inproc.put_collection()
    basic = {"type": "Basic", "username": "u", "password": "secret-pw"}
    inproc.put_job(
        "jc",
        "j",
        {
            "properties": {
                "startTime": later(hours=2),
                "state": "Disabled",
                "action": {
                    "type": "Https",
                    "request": {"uri": "https://x/", "method": "POST", "headers": {"a": "1"}, "authentication": basic},
                    "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2},
                },
            }
        },
    )
    patched = inproc.call(
        "Jobs_Patch",
        "PATCH",
        "jc",
        "j",
        body={
            "Properties": {"Action": {"Request": {"Body": "hello"}, "retryPolicy": {"retryCount": 5}}, "state": None}
        },
    )
    props = patched.body["properties"]
    assert patched.status == 200 and props["state"] == "disabled"
    assert props["action"]["request"]["body"] == "hello" and props["action"]["request"]["headers"] == {"a": "1"}
    assert props["action"]["retryPolicy"] == {"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 5}
    assert props["action"]["request"]["authentication"] == {"type": "Basic", "username": "u"}
    stored = inproc.rt.store.jobs.get(inproc.rt.store.jobs.all(_key(inproc))[0].key)
    assert stored.properties.action.request.authentication.password == "secret-pw"
    # A PUT of what GET returned (no secrets) keeps them too.
    inproc.put_job("jc", "j", inproc.get_job("jc", "j").body, expect=200)
    stored = inproc.rt.store.jobs.get(stored.key)
    assert stored.properties.action.request.authentication.password == "secret-pw"
    removed = inproc.call(
        "Jobs_Patch", "PATCH", "jc", "j", body={"properties": {"action": {"request": {"authentication": None}}}}
    )
    assert "authentication" not in removed.body["properties"]["action"]["request"]
    switched = inproc.call(
        "Jobs_Patch",
        "PATCH",
        "jc",
        "j",
        body={
            "properties": {
                "action": {
                    "type": "StorageQueue",
                    "queueMessage": {"storageAccount": "a", "queueName": "q", "sasToken": "t"},
                }
            }
        },
    )
    assert switched.status == 200 and "request" not in switched.body["properties"]["action"]
    assert switched.body["properties"]["action"]["retryPolicy"]["retryCount"] == 5


def test_client_certificate_facts_are_reported_not_the_pfx(inproc) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Scheduler Mgmt")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(datetime(2031, 1, 1, tzinfo=UTC))
        .sign(key, hashes.SHA256())
    )
    pfx = pkcs12.serialize_key_and_certificates(b"c", key, cert, None, BestAvailableEncryption(b"pw"))
    inproc.put_collection()
    auth = {"type": "ClientCertificate", "pfx": base64.b64encode(pfx).decode(), "password": "pw"}
    created = inproc.put_job(
        "jc",
        "cert",
        {
            "properties": {
                "action": {"type": "Https", "request": {"uri": "https://x/", "method": "GET", "authentication": auth}}
            }
        },
    )
    shown = created.body["properties"]["action"]["request"]["authentication"]
    assert shown["certificateSubjectName"] == "CN=Scheduler Mgmt"
    assert shown["certificateExpirationDate"] == "2031-01-01T00:00:00Z"
    assert len(shown["certificateThumbprint"]) == 40 and "pfx" not in shown and "password" not in shown
    wrong = inproc.put_job(
        "jc",
        "cert2",
        {
            "properties": {
                "action": {
                    "type": "Https",
                    "request": {"uri": "https://x/", "method": "GET", "authentication": {**auth, "password": "nope"}},
                }
            }
        },
        expect=400,
    )
    assert "authentication.password" in wrong.body["error"]["message"]


def _key(inproc):
    from shared.keys import CollectionKey

    return CollectionKey(inproc.SUB, inproc.RG, "jc")
