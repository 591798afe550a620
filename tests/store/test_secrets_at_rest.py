"""Secrets at rest: the stored job entity holds no plaintext secret, reading back restores them, a sealed
value opens only for its own job, and key rotation works (old keys keep opening, re-wrap moves everything
to the new key, a job whose key is gone still loads and keeps its sealed secrets)."""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import replace

import pytest

from shared.keys import JobKey
from shared.runtime import Runtime
from shared.settings import Settings, StorageSettings
from shared.store import JobStore, Store, keyring_of
from shared.store.sealing import Keyring, SealError, new_key_material, open_sealed
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

PASSWORD, CLIENT_SECRET, SAS = "pw-Basic-0001", "oauth-secret-0002", "?sv=2020&sig=SAS-SIGNATURE-0003"
SECRETS = (PASSWORD, CLIENT_SECRET, SAS)


def _job(uri: str = "https://hooks.example.com/run") -> dict:
    return {
        "properties": {
            "action": {
                "type": "Https",
                "request": {
                    "uri": uri,
                    "method": "POST",
                    "body": "b",
                    "authentication": {"type": "Basic", "username": "user", "password": PASSWORD},
                },
                "errorAction": {
                    "type": "StorageQueue",
                    "queueMessage": {"storageAccount": "acct1", "queueName": "q", "sasToken": SAS, "message": "m"},
                },
            }
        }
    }


def _oauth_job() -> dict:
    return {
        "properties": {
            "action": {
                "type": "Https",
                "request": {
                    "uri": "https://hooks.example.com/run",
                    "method": "GET",
                    "authentication": {
                        "type": "ActiveDirectoryOAuth",
                        "tenant": "contoso.onmicrosoft.com",
                        "audience": "https://x",
                        "clientId": "c1",
                        "secret": CLIENT_SECRET,
                    },
                },
            }
        }
    }


def _raw(rt: Runtime, name: str) -> dict:
    entity = rt.store.jobs.table.get(*_keys(rt, name))
    assert entity is not None
    return entity


def _keys(rt: Runtime, name: str) -> tuple[str, str]:
    found = [e for e in rt.store.jobs.table.query("PartitionKey ge @lo", {"lo": ""}) if e["Name"] == name]
    assert len(found) == 1
    return found[0]["PartitionKey"], found[0]["RowKey"]


def _store(settings: Settings, keys: str | None) -> Store:
    return Store.from_settings(replace(settings, secret_keys=keys))


def test_the_stored_entity_holds_no_plaintext_secret(runtime: Runtime) -> None:
    make_collection(runtime)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", _job()).status == 201
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j2", _oauth_job()).status == 201
    for name in ("j1", "j2"):
        entity = _raw(runtime, name)
        text = json.dumps({k: str(v) for k, v in entity.items()})
        for secret in SECRETS:
            assert secret not in text
            assert base64.b64encode(secret.encode()).decode() not in text
        assert "password" not in entity["Document"] and 'secret"' not in entity["Document"]
        assert json.loads(entity["Sealed"])["kid"].startswith("k")
    # Reading back restores every secret where it was.
    record = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1"))
    assert record is not None and record.properties.action is not None
    assert record.properties.action.request.authentication.password == PASSWORD
    assert record.properties.action.error_action.queue_message.sas_token == SAS
    oauth = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j2"))
    assert oauth is not None and oauth.properties.action.request.authentication.secret == CLIENT_SECRET
    # ... and the API still never shows them; a PATCH keeps them (sealed afresh).
    shown = call(runtime, "Jobs_Get", "GET", "j1").body
    assert not any(secret in json.dumps(shown) for secret in SECRETS)
    patch = {"properties": {"action": {"request": {"body": "c"}}}}
    assert call(runtime, "Jobs_Patch", "PATCH", "j1", patch).status == 200
    again = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1"))
    assert again is not None and again.properties.action.request.authentication.password == PASSWORD
    assert PASSWORD not in json.dumps({k: str(v) for k, v in _raw(runtime, "j1").items()})


def test_a_job_without_secrets_stores_no_sealed_value(runtime: Runtime) -> None:
    make_collection(runtime)
    job = {"properties": {"action": {"type": "Https", "request": {"uri": "https://h.example.com", "method": "GET"}}}}
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "plain", job).status == 201
    assert "Sealed" not in _raw(runtime, "plain")


def test_a_sealed_value_opens_only_for_its_own_job(runtime: Runtime) -> None:
    make_collection(runtime)
    for name in ("j1", "j2"):
        assert call(runtime, "Jobs_CreateOrUpdate", "PUT", name, _job()).status == 201
    sealed = _raw(runtime, "j1")["Sealed"]
    keyring = runtime.store.jobs.keyring
    assert keyring is not None
    partition, row = _keys(runtime, "j2")
    with pytest.raises(SealError):
        open_sealed(keyring, sealed, f"{partition}\n{row}")
    tampered = json.loads(sealed)
    ciphertext = base64.b64decode(tampered["ct"])
    # Flip a bit rather than set a byte: a last byte that already was 0 left the value untouched (1 run in 256).
    tampered["ct"] = base64.b64encode(ciphertext[:-1] + bytes([ciphertext[-1] ^ 0x01])).decode()
    partition, row = _keys(runtime, "j1")
    with pytest.raises(SealError):
        open_sealed(keyring, json.dumps(tampered), f"{partition}\n{row}")


def test_key_rotation(settings: Settings, runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    old, new = settings.secret_keys, new_key_material()
    assert old is not None
    make_collection(runtime)
    for name in ("j1", "j2"):
        assert call(runtime, "Jobs_CreateOrUpdate", "PUT", name, _job()).status == 201
    key = JobKey(SUB, RG, JC, "j1")

    rotating = _store(settings, f"{new};{old}")  # step 1: the new key first, the old one still there
    record = rotating.jobs.get(key)
    assert record is not None and record.properties.action.request.authentication.password == PASSWORD
    assert rotating.jobs.rewrap_all() == (2, 0)  # step 2: re-wrap every data key under the new key
    assert rotating.jobs.rewrap_all() == (0, 2)
    new_id = Keyring.parse(new).current.id
    assert json.loads(_raw(runtime, "j1")["Sealed"])["kid"] == new_id

    rotated = _store(settings, new)  # step 3: the old key is gone, everything still opens
    record = rotated.jobs.get(key)
    assert record is not None and record.properties.action.request.authentication.password == PASSWORD

    # A deployment left with only the old key loads the job without its secrets, logs it, and a write of
    # that record keeps the sealed value as it was, so the right key opens it again later.
    stale = _store(settings, old)
    with caplog.at_level(logging.ERROR):
        record = stale.jobs.get(key)
    assert record is not None and record.properties.action.request.authentication.password is None
    assert "secrets not available" in caplog.text and PASSWORD not in caplog.text
    sealed_before = _raw(runtime, "j1")["Sealed"]
    stale.jobs.replace(replace(record, execution_count=record.execution_count + 1))
    assert _raw(runtime, "j1")["Sealed"] == sealed_before
    reopened = rotated.jobs.get(key)
    assert reopened is not None and reopened.properties.action.request.authentication.password == PASSWORD
    assert reopened.execution_count == 1


def test_without_a_keyring_secrets_are_neither_stored_nor_read(settings: Settings, runtime: Runtime) -> None:
    make_collection(runtime)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", _job()).status == 201
    cloud = StorageSettings(
        table_service_uri="https://acct.table.core.windows.net", queue_service_uri="https://acct.queue.core.windows.net"
    )
    assert keyring_of(Settings(storage=cloud)) is None  # a cloud deployment needs SCHEDULER_SECRET_KEYS
    assert keyring_of(replace(settings, secret_keys=None)) is not None  # Azurite: the development key
    bare = JobStore(runtime.store.jobs.table, keyring_of(Settings(storage=cloud)))  # the same table, no key
    record = bare.get(JobKey(SUB, RG, JC, "j1"))
    assert record is not None and record.unopened_secrets is not None
    record.properties.action.request.authentication.password = "new-password"
    with pytest.raises(SealError):
        bare.replace(record)


def test_the_key_setting_is_never_printed(settings: Settings) -> None:
    assert settings.secret_keys is not None and settings.secret_keys not in repr(settings)
    with pytest.raises(ValueError):
        Keyring.parse("too-short")


def test_the_executor_sends_the_secret_it_unsealed(runtime: Runtime, http_target) -> None:
    """From the API through the sealed store to the wire: the target receives the password it was given."""
    make_collection(runtime)
    job = _job(http_target.url + "/hook")
    job["properties"]["action"]["type"] = "Http"
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", job).status == 201
    assert PASSWORD not in json.dumps({k: str(v) for k, v in _raw(runtime, "j1").items()})
    assert call(runtime, "Jobs_Run", "POST", "j1").status == 200
    drain(runtime, 20, until=lambda: bool(http_target.requests))
    assert http_target.requests, "the job did not run"
    expected = "Basic " + base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    assert http_target.requests[0].headers["authorization"] == expected
