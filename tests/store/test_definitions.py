"""A job's unchanged definition is parsed and sealed once (store/definitions.py), on real Azurite: reads of an
unchanged row share one parsed definition, a status write of it stores the very text it was read with, a
changed definition is parsed and sealed afresh, and a sealed value copied into another job's row does not open
there through the cache either."""

from __future__ import annotations

from dataclasses import replace

from shared.keys import JobKey
from shared.runtime import Runtime
from shared.store.keys import job_partition, job_row
from tests.store.test_secrets_at_rest import PASSWORD, _job
from tests.support.scheduler_client import JC, RG, SUB, call, make_collection


def _raw(rt: Runtime, name: str) -> dict:
    key = JobKey(SUB, RG, JC, name)
    entity = rt.store.jobs.table.get(job_partition(key.collection_key), job_row(key))
    assert entity is not None
    return entity


def test_an_unchanged_definition_is_parsed_once_and_written_as_read(runtime: Runtime) -> None:
    make_collection(runtime)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", _job()).status == 201
    key = JobKey(SUB, RG, JC, "j1")
    first, again = runtime.store.jobs.get(key), runtime.store.jobs.get(key)
    assert first is not None and again is not None
    assert first.properties is again.properties
    stored = _raw(runtime, "j1")
    written = runtime.store.jobs.replace(replace(first, execution_count=first.execution_count + 1))
    after = _raw(runtime, "j1")
    assert (after["Document"], after["Sealed"]) == (stored["Document"], stored["Sealed"])
    assert after["ExecutionCount"] == first.execution_count + 1
    assert runtime.store.jobs.get(key) == replace(written, etag=after["etag"])


def test_a_changed_definition_is_parsed_and_sealed_afresh(runtime: Runtime) -> None:
    make_collection(runtime)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", _job()).status == 201
    key = JobKey(SUB, RG, JC, "j1")
    before = runtime.store.jobs.get(key)
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "j1", _job("https://hooks.example.com/other")).status == 200
    after = runtime.store.jobs.get(key)
    assert before is not None and after is not None
    assert after.properties is not before.properties
    request = after.properties.action.request if after.properties.action else None
    assert request is not None and request.uri == "https://hooks.example.com/other"
    assert PASSWORD not in _raw(runtime, "j1")["Document"]


def test_a_sealed_value_copied_to_another_row_does_not_open_through_the_cache(runtime: Runtime) -> None:
    make_collection(runtime)
    for name in ("j1", "j2"):
        assert call(runtime, "Jobs_CreateOrUpdate", "PUT", name, _job()).status == 201
    assert runtime.store.jobs.get(JobKey(SUB, RG, JC, "j1")) is not None  # j1's text and secrets now cached
    one, two = _raw(runtime, "j1"), _raw(runtime, "j2")
    runtime.store.jobs.table.replace({**two, "Document": one["Document"], "Sealed": one["Sealed"]}, two["etag"])
    copied = runtime.store.jobs.get(JobKey(SUB, RG, JC, "j2"))
    assert copied is not None and copied.unopened_secrets == one["Sealed"]
