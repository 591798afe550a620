"""Hostile but parseable input, as a user of the old service would probe the API and the action targets:
it is a 400 (never a 500), secrets never follow a job to another target, and what an action reports fits
history."""

from __future__ import annotations

import base64
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from shared.actions.storage_queue import StorageQueueTarget
from shared.keys import JobKey
from shared.model import JobErrorAction
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.support import context, history
from tests.executor.test_storage_queue_action import make_queue, read_back
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

HOOK = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}


def _assert_bad_request(response, path: str) -> None:
    assert response.status == 400, response.body
    assert response.body["error"]["code"] == "BadRequest"
    assert response.body["error"]["message"].startswith(f"{path}:"), response.body


@pytest.mark.parametrize(
    ("properties", "path"),
    [
        (
            {"action": {**HOOK, "retryPolicy": {"retryType": "Fixed", "retryInterval": "P99999999999D"}}},
            "properties.action.retryPolicy.retryInterval",
        ),
        (
            {"action": {**HOOK, "retryPolicy": {"retryType": "Fixed", "retryInterval": "99999999999.00:00:00"}}},
            "properties.action.retryPolicy.retryInterval",
        ),
        (
            {"action": {**HOOK, "retryPolicy": {"retryType": "Exponential", "maxRetryInterval": "PT99999999999999H"}}},
            "properties.action.retryPolicy.maxRetryInterval",
        ),
        ({"startTime": "0001-01-01T00:00:00+01:00", "action": HOOK}, "properties.startTime"),
        ({"startTime": "9999-12-31T23:59:59-01:00", "action": HOOK}, "properties.startTime"),
        (
            {"action": HOOK, "recurrence": {"frequency": "Day", "endTime": "0001-01-01T00:30:00+05:00"}},
            "properties.recurrence.endTime",
        ),
    ],
)
def test_out_of_range_durations_and_instants_are_400_not_500(runtime: Runtime, properties, path) -> None:
    make_collection(runtime)
    _assert_bad_request(call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", {"properties": properties}), path)


def test_an_integer_literal_too_long_to_parse_is_400_not_500(runtime: Runtime) -> None:
    make_collection(runtime)
    raw = (
        b'{"properties": {"action": {"type": "Http", "request": {"uri": "http://x/", "method": "GET"}}, '
        b'"recurrence": {"frequency": "Day", "interval": ' + b"9" * 5000 + b"}}}"
    )
    response = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", raw=raw)
    assert response.status == 400, response.body
    assert response.body["error"]["code"] == "BadRequest"


def test_a_huge_max_recurrence_quota_is_a_409_for_recurring_jobs_not_a_500(runtime: Runtime) -> None:
    beyond_int32 = call(
        runtime,
        "JobCollections_CreateOrUpdate",
        "PUT",
        body={
            "location": "West US",
            "properties": {"quota": {"maxRecurrence": {"frequency": "Year", "interval": 10**12}}},
        },
    )
    assert beyond_int32.status == 400, beyond_int32.body  # the spec's int32
    response = call(
        runtime,
        "JobCollections_CreateOrUpdate",
        "PUT",
        body={
            "location": "West US",
            "properties": {"quota": {"maxRecurrence": {"frequency": "Year", "interval": 2**31 - 1}}},
        },
    )
    assert response.status == 201, response.body
    recurring = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "j1",
        {"properties": {"action": HOOK, "recurrence": {"frequency": "Day"}}},
    )
    assert recurring.status == 409, recurring.body
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j2", {"properties": {"action": HOOK}}).status == 201
    # Tightening the quota of a collection that holds jobs checks them against it: also no overflow.
    tightened = call(
        runtime,
        "JobCollections_Patch",
        "PATCH",
        body={"properties": {"quota": {"maxRecurrence": {"frequency": "Minute", "interval": 2**31 - 1}}}},
    )
    assert tightened.status == 200, tightened.body


def test_patch_moving_a_queue_action_to_another_account_does_not_take_the_sas_along(runtime: Runtime) -> None:
    """PUT only carries a stored sasToken while storageAccount is unchanged; PATCH must not do otherwise,
    or the token of one account is sent to another's endpoint (where it is useless anyway)."""
    make_collection(runtime)
    queue = {
        "type": "StorageQueue",
        "queueMessage": {"storageAccount": "acct1", "queueName": "q", "sasToken": "?sv=1&sig=SECRET"},
    }
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", {"properties": {"action": queue}}).status == 201
    moved = call(
        runtime,
        "Jobs_Patch",
        "PATCH",
        "j1",
        {"properties": {"action": {"queueMessage": {"storageAccount": "otheracct"}}}},
    )
    assert moved.status == 200, moved.body
    stored = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1"))
    assert stored is not None and stored.properties.action is not None
    assert stored.properties.action.queue_message is not None
    assert stored.properties.action.queue_message.sas_token is None
    # Same account (any case), another queue: the token still applies and is kept, as on PUT.
    assert (
        call(
            runtime,
            "Jobs_Patch",
            "PATCH",
            "j1",
            {"properties": {"action": {"queueMessage": {"storageAccount": "acct2", "sasToken": "?sig=NEW"}}}},
        ).status
        == 200
    )
    assert (
        call(
            runtime,
            "Jobs_Patch",
            "PATCH",
            "j1",
            {"properties": {"action": {"queueMessage": {"storageAccount": "ACCT2", "queueName": "q2"}}}},
        ).status
        == 200
    )
    stored = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1"))
    assert stored is not None and stored.properties.action is not None
    assert stored.properties.action.queue_message is not None
    assert stored.properties.action.queue_message.sas_token == "?sig=NEW"


def test_patch_renaming_a_service_bus_key_does_not_keep_the_old_key(runtime: Runtime) -> None:
    make_collection(runtime)
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "ns1",
            "queueName": "q",
            "authentication": {"sasKeyName": "k1", "sasKey": "SECRET"},
        },
        "errorAction": {
            "type": "ServiceBusTopic",
            "serviceBusTopicMessage": {
                "namespace": "ns1",
                "topicPath": "t",
                "authentication": {"sasKeyName": "k1", "sasKey": "SECRET2"},
            },
        },
    }
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", {"properties": {"action": action}}).status == 201
    patched = call(
        runtime,
        "Jobs_Patch",
        "PATCH",
        "j1",
        {
            "properties": {
                "action": {
                    "serviceBusQueueMessage": {"authentication": {"sasKeyName": "k2"}},
                    "errorAction": {"serviceBusTopicMessage": {"namespace": "ns2"}},
                }
            }
        },
    )
    assert patched.status == 200, patched.body
    stored = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1"))
    assert stored is not None and stored.properties.action is not None
    document = stored.properties.action.to_document()
    assert "sasKey" not in document["serviceBusQueueMessage"]["authentication"]
    # The key name is unchanged in the error action: its key still applies.
    assert document["errorAction"]["serviceBusTopicMessage"]["authentication"]["sasKey"] == "SECRET2"


@pytest.mark.parametrize("text", ["bell\x07", "nul\x00", "vt\x0b", "fffe\ufffe", "lone\ud800"])
def test_a_queue_message_xml_cannot_carry_is_rejected_at_write(runtime: Runtime, text: str) -> None:
    """The envelope is XML 1.0: these characters make it unparseable for every consumer (or unsendable)."""
    make_collection(runtime)
    for holder, path in (
        ({"action": None}, "properties.action"),
        ({"action": {**HOOK, "errorAction": None}}, "properties.action.errorAction"),
    ):
        queue = {
            "type": "StorageQueue",
            "queueMessage": {"storageAccount": "acct1", "queueName": "q", "sasToken": "?sig=x", "message": text},
        }
        properties = {"action": queue} if holder["action"] is None else {"action": {**HOOK, "errorAction": queue}}
        response = call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", {"properties": properties})
        _assert_bad_request(response, f"{path}.queueMessage.message")


def test_the_envelope_of_a_message_with_markup_and_whitespace_parses_back(settings: Settings) -> None:
    name, sas = make_queue(settings)
    message = '<a href="x">&amp;</a> ]]> tab\there \u00e9\U0001f600'
    action = JobErrorAction.model_validate(
        {
            "type": "StorageQueue",
            "queueMessage": {
                "storageAccount": "devstoreaccount1",
                "queueName": name,
                "sasToken": sas,
                "message": message,
            },
        }
    )
    assert StorageQueueTarget(settings).run(action, context()).succeeded
    [raw] = read_back(settings, name)
    root = ET.fromstring(base64.b64decode(raw).decode("utf-8"))
    assert root.findtext("Message") == message


@pytest.fixture
def noisy_target() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server answering 200 with 60,000 characters of response headers; records each call."""
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the http.server protocol
            calls.append(self.path)
            body = b"ok"
            self.send_response(200)
            for index in range(6):
                self.send_header(f"X-Large-{index}", "v" * 10_000)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", calls
    server.shutdown()
    server.server_close()


def test_huge_response_headers_still_fit_history_and_run_once(runtime: Runtime, noisy_target) -> None:
    """A history entry is one Table property (at most 32K UTF-16 characters): a message over that fails the
    history write, the attempt is redelivered, and the action runs again and again."""
    url, calls = noisy_target
    make_collection(runtime)
    response = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "j1",
        {"properties": {"action": {"type": "Http", "request": {"uri": url, "method": "GET"}}}},
    )
    assert response.status == 201, response.body
    drain(runtime, 10, until=lambda: bool(history(runtime, "j1")))
    [entry] = history(runtime, "j1")
    assert entry.status.value == "Completed"
    assert entry.message.startswith("Http Action - Response from host '127.0.0.1': 'OK' Response Headers: ")
    assert entry.message.endswith(" Body: ok")
    assert len(entry.message) < 16_000
    assert calls == ["/"]


def _basic_job(uri: str, password: str | None) -> dict:
    auth = {"type": "Basic", "username": "svc", **({"password": password} if password else {})}
    return {
        "properties": {"action": {"type": "Https", "request": {"uri": uri, "method": "GET", "authentication": auth}}}
    }


def test_a_stored_password_stays_with_its_origin(runtime) -> None:
    make_collection(runtime)
    created = call(runtime, "Jobs_CreateOrUpdate", "PUT", "cred", _basic_job("https://a.example.com/x", "s3cret"))
    assert created.status == 201, created.body
    same_origin = call(runtime, "Jobs_CreateOrUpdate", "PUT", "cred", _basic_job("https://a.example.com/other", None))
    assert same_origin.status == 200, same_origin.body  # GET -> modify -> PUT keeps working
    moved = call(runtime, "Jobs_CreateOrUpdate", "PUT", "cred", _basic_job("https://evil.example.net/x", None))
    assert moved.status == 400 and "Password" in moved.body["error"]["message"]
    patched = call(
        runtime,
        "Jobs_Patch",
        "PATCH",
        "cred",
        {"properties": {"action": {"request": {"uri": "https://a.example.com:8443/x"}}}},
    )
    assert patched.status == 400 and "Password" in patched.body["error"]["message"]
    stored = runtime.store.jobs.get(JobKey(SUB, RG, JC, "cred"))
    assert stored is not None and stored.properties.action.request.uri == "https://a.example.com/other"
    assert stored.properties.action.request.authentication.password == "s3cret"


@pytest.mark.parametrize(
    ("request_part", "path"),
    [
        ({"method": "GE T\r\nX: y"}, "request.method"),
        ({"method": "GET", "headers": {"x-a": "one\r\nInjected: yes"}}, "request.headers.x-a"),
        ({"method": "GET", "headers": {"x-a": "snow \u2603"}}, "request.headers.x-a"),
        ({"method": "GET", "headers": {"bad name": "v"}}, "request.headers"),
    ],
)
def test_requests_that_could_never_be_sent_are_rejected_at_write(runtime, request_part, path) -> None:
    make_collection(runtime)
    response = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "unsendable",
        {"properties": {"action": {"type": "Https", "request": {"uri": "https://example.com/", **request_part}}}},
    )
    assert response.status == 400, response.body
    assert f"properties.action.{path}" in response.body["error"]["message"]
    assert call(runtime, "Jobs_Get", "GET", "unsendable").status == 404


def test_ordinary_methods_and_headers_are_accepted(runtime) -> None:
    make_collection(runtime)
    response = call(
        runtime,
        "Jobs_CreateOrUpdate",
        "PUT",
        "fine",
        {
            "properties": {
                "action": {
                    "type": "Https",
                    "request": {
                        "uri": "https://example.com/",
                        "method": "patch",
                        "headers": {
                            "Content-Type": "application/json; charset=utf-8",
                            "X-Tab": "a\tb",
                            "X-Latin": "caf\u00e9",
                        },
                    },
                }
            }
        },
    )
    assert response.status == 201, response.body
