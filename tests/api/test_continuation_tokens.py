"""Continuation tokens ($skiptoken in nextLink) are opaque and tamper-proof: nothing readable in them, any altered
byte refused, bound to the list, filter and collection they continue, expired after an hour, opened across a key
rotation and not after the key is gone. Every refusal is a 400 in ARM's shape, never a silent first page. Role
assignment lists page with them too."""

from __future__ import annotations

import base64
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from shared import api
from shared.api import continuation
from shared.errors import ApiError
from shared.keys import CollectionKey
from shared.model import JobProperties, JobState
from shared.records import JobRecord
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store import RoleAssignmentRecord
from shared.store.sealing import new_key_material
from tests.api.conftest import InProcess
from tests.conftest import ManualClock

V = {"api-version": "2016-03-01"}
NAMES = [f"payroll-secret-{i:03d}" for i in range(130)]


def _fill(inproc: Any, collection: str = "jc", names: list[str] = NAMES) -> None:
    inproc.put_collection(collection, sku="P20Premium")
    properties = JobProperties.model_validate(
        {
            "startTime": "2030-01-01T00:00:00Z",
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        }
    )
    key = CollectionKey(inproc.SUB, inproc.RG, collection)
    for name in names:  # written to the store directly: the API's write path is tested elsewhere
        inproc.rt.store.jobs.insert(JobRecord(key=key.job(name), properties=properties, state=JobState.ENABLED))


def _next(inproc: Any, collection: str = "jc", query: dict[str, str] | None = None) -> dict[str, str]:
    first = inproc.call("Jobs_List", "GET", collection, query={**V, **(query or {})}, suffix="/jobs")
    assert first.status == 200 and first.body["nextLink"], first.body
    return dict(parse_qsl(urlsplit(first.body["nextLink"]).query))


def _raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "==")


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _refused(response: api.ApiResponse) -> str:
    assert response.status == 400, response.body
    assert set(response.body) == {"error"} and response.body["error"]["code"] == "BadRequest"
    message: str = response.body["error"]["message"]
    assert message.startswith("$skiptoken: ")
    return message


def test_a_token_says_nothing_and_every_altered_byte_is_refused(inproc) -> None:
    _fill(inproc)
    query = _next(inproc)
    token = query["$skiptoken"]
    raw = _raw(token)
    assert (len(raw) - 1 - 12 - 16) % 64 == 0  # version, nonce, tag and a ciphertext padded to 64 bytes
    for shown in (token, raw.decode("latin-1")):
        assert "payroll" not in shown and "after" not in shown and "secret" not in shown
    assert (
        inproc.call("Jobs_List", "GET", "jc", query=query, suffix="/jobs").body["value"][0]["name"]
        == f"jc/{NAMES[100]}"
    )
    for index in range(len(raw)):  # every byte: version, nonce, ciphertext and tag
        flipped = bytearray(raw)
        flipped[index] ^= 0x01
        _refused(inproc.call("Jobs_List", "GET", "jc", query={**query, "$skiptoken": _text(bytes(flipped))}))
    for forged in (
        token[:-2],
        token + "AA",
        "",
        " ",
        "!!",
        "eyJhZnRlciI6ImpjfHBheXJvbGwifQ",
        "A" * 5000,
        base64.urlsafe_b64encode(b'{"after":"payroll-secret-050"}').decode(),
    ):
        _refused(inproc.call("Jobs_List", "GET", "jc", query={**query, "$skiptoken": forged}))


def test_a_token_continues_only_its_own_list(inproc) -> None:
    _fill(inproc)
    _fill(inproc, "other")
    query = _next(inproc)
    assert inproc.call("Jobs_List", "GET", "other", query=query).status == 400
    assert inproc.call("Jobs_List", "GET", "jc", query={**query, "$filter": "state eq 'Disabled'"}).status == 400
    filtered = _next(inproc, query={"$filter": "state eq 'Enabled'"})
    assert inproc.call("Jobs_List", "GET", "jc", query={**filtered, "$filter": "state eq 'Disabled'"}).status == 400
    assert inproc.call("Jobs_List", "GET", "jc", query={**filtered, "$filter": "STATE eq enabled"}).status == 200
    assert inproc.call("Jobs_List", "GET", "jc", query=filtered).status == 200
    _refused(inproc.call("Jobs_ListJobHistory", "GET", "jc", NAMES[0], query=query))
    _refused(inproc.call("JobCollections_ListBySubscription", "GET", query=query))
    # The collection's name in another case is the same list (ARM names ignore case).
    assert inproc.call("Jobs_List", "GET", "JC", query=query, suffix="/jobs").status == 200


def test_a_token_expires_after_an_hour(settings: Settings) -> None:
    clock = ManualClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    inproc = InProcess(Runtime.create(settings, clock=clock))
    _fill(inproc, names=NAMES[:101])
    query = _next(inproc)
    clock.advance(timedelta(minutes=59))
    assert [j["name"] for j in inproc.call("Jobs_List", "GET", "jc", query=query).body["value"]] == [f"jc/{NAMES[100]}"]
    clock.advance(timedelta(minutes=2))
    assert "expired" in _refused(inproc.call("Jobs_List", "GET", "jc", query=query))


def _settings(keys: str | None, account: str = "devstoreaccount1") -> Settings:
    return Settings(
        storage=StorageSettings(connection_string=f"AccountName={account};AccountKey=a2V5"), secret_keys=keys
    )


def test_a_token_opens_across_a_key_rotation_and_not_once_its_key_is_gone() -> None:
    old, new = new_key_material(), new_key_material()
    now = datetime(2026, 3, 1, tzinfo=UTC)
    bound = continuation.binding("jobs", {"subscriptionId": "s"}, "", None, None)
    token = continuation.seal(_settings(old), now, bound, "row-7")
    assert continuation.unseal(_settings(f"{new};{old}"), now, bound, token) == "row-7"
    with pytest.raises(ApiError) as refused:
        continuation.unseal(_settings(new), now, bound, token)
    assert refused.value.status == 400
    other = continuation.binding("jobs", {"subscriptionId": "s"}, "", "someone", None)
    with pytest.raises(ApiError):
        continuation.unseal(_settings(old), now, other, token)
    # Tokens use their own key: the development key of Azurite, or SCHEDULER_SECRET_KEYS, never nothing.
    assert continuation.unseal(_settings(None), now, bound, continuation.seal(_settings(None), now, bound, 1)) == 1
    with pytest.raises(ApiError) as unkeyed:
        continuation.seal(_settings(None, account="production"), now, bound, "row-7")
    assert unkeyed.value.status == 500 and "SCHEDULER_SECRET_KEYS" not in unkeyed.value.message


def test_role_assignment_lists_page_with_sealed_tokens(runtime: Runtime) -> None:
    sub = "1c0c8c8c-0000-4000-8000-000000000001"
    created = datetime(2026, 3, 1, tzinfo=UTC)
    names = [f"00000000-0000-4000-8000-{i:012d}" for i in range(130)]
    for index, name in enumerate(names):
        runtime.store.role_assignments.insert(
            RoleAssignmentRecord(
                subscription=sub,
                name=name,
                scope=f"/subscriptions/{sub}/resourceGroups/rg{index % 3}",
                role_id="acdd72a7-3385-48ef-bd42-f606fba81ae7",
                principal_id=names[0],
                principal_type="User",
                created_on=created,
            )
        )
    url = f"http://127.0.0.1/api/subscriptions/{sub}/providers/Microsoft.Authorization/roleAssignments"
    request = api.ApiRequest("GET", url, {"subscriptionId": sub}, {"api-version": "2022-04-01"})
    seen, pages = [], []
    while True:
        answer = api.handle("RoleAssignments_ListForScope", request, runtime)
        assert answer.status == 200, answer.body
        seen += [a["name"] for a in answer.body["value"]]
        pages.append(len(answer.body["value"]))
        link = answer.body.get("nextLink")
        if link is None:
            break
        assert "resourceGroups" not in link and "rg0" not in link
        request = dataclasses.replace(request, url=link, query=dict(parse_qsl(urlsplit(link).query)))
    assert pages == [100, 30] and sorted(seen) == names and len(set(seen)) == 130
    token = dict(request.query)["$skiptoken"]
    changed = token[:40] + ("B" if token[40] == "A" else "A") + token[41:]
    tampered = dataclasses.replace(request, query={**request.query, "$skiptoken": changed})
    answer = api.handle("RoleAssignments_ListForScope", tampered, runtime)
    assert answer.status == 400 and answer.body["error"]["message"].startswith("$skiptoken: ")
    at_scope = dataclasses.replace(request, query={**request.query, "$filter": "atScope()"})
    assert api.handle("RoleAssignments_ListForScope", at_scope, runtime).status == 400
