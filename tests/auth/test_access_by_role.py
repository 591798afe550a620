"""401/403/200 by role and scope, through the official azure-mgmt-scheduler client with real signed tokens,
against the real function_app.py in `entra` mode."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.mgmt.scheduler import models as m

from tests.auth.conftest import (
    CONTRIBUTOR_ROLE,
    OWNER,
    OWNER_ROLE,
    READER_ROLE,
    SUB,
    Scheduler,
    collection_scope,
    group_scope,
)
from tests.support.identity import AUDIENCE, MintedCredential, new_id


def _collection() -> m.JobCollectionDefinition:
    return m.JobCollectionDefinition(
        location="westus", properties=m.JobCollectionProperties(sku=m.Sku(name="Standard"))
    )


def _job() -> m.JobDefinition:
    return m.JobDefinition(
        properties=m.JobProperties(
            start_time=datetime.now(UTC) + timedelta(days=1),
            recurrence=m.JobRecurrence(frequency="Day", interval=1),
            action=m.JobAction(type="Http", request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET")),
        )
    )


def _refused(call, status: int = 403) -> HttpResponseError:
    with pytest.raises(HttpResponseError) as caught:
        call()
    assert caught.value.status_code == status, caught.value
    return caught.value


def test_the_client_asks_for_the_schedulers_audience_and_the_bootstrap_owner_may_do_everything(
    scheduler: Scheduler,
) -> None:
    client = scheduler.client(OWNER)
    client.job_collections.create_or_update("rg-boot", "jc", _collection())
    client.jobs.create_or_update("rg-boot", "jc", "j", _job())
    client.jobs.run("rg-boot", "jc", "j")
    assert client.jobs.get("rg-boot", "jc", "j").name == "jc/j"
    client.jobs.delete("rg-boot", "jc", "j")
    client.job_collections.begin_delete("rg-boot", "jc").result()
    credential = client._config.credential
    assert isinstance(credential, MintedCredential)
    assert set(credential.scopes) == {(f"{AUDIENCE}/.default",)}  # never management.azure.com


def test_without_a_token_nothing_runs_and_nothing_is_stored(scheduler: Scheduler) -> None:
    path = f"/subscriptions/{SUB}/resourceGroups/rg-anon/providers/Microsoft.Scheduler/jobCollections/jc"
    response = scheduler.http("PUT", path, body={"location": "westus", "properties": {"sku": {"name": "Standard"}}})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AuthenticationFailed"
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and f'resource_id="{AUDIENCE}"' in challenge
    assert "error=" not in challenge  # no token was sent (RFC 6750 §3)
    with pytest.raises(ResourceNotFoundError):
        scheduler.client(OWNER).job_collections.get("rg-anon", "jc")


def test_a_stranger_gets_authorization_failed_and_changes_nothing(scheduler: Scheduler) -> None:
    scheduler.client(OWNER).job_collections.create_or_update("rg-strange", "jc", _collection())
    stranger = new_id()
    client = scheduler.client(stranger, upn="mallory@contoso.example")
    error = _refused(lambda: client.jobs.create_or_update("rg-strange", "jc", "j", _job()))
    assert error.error.code == "AuthorizationFailed"
    scope = collection_scope("rg-strange", "jc")
    assert error.error.message == (
        f"The client 'mallory@contoso.example' with object id '{stranger}' does not have authorization to perform "
        f"action 'Microsoft.Scheduler/jobCollections/jobs/write' over scope '{scope}' or the scope is invalid. "
        "If access was recently granted, please refresh your credentials."
    )
    _refused(lambda: client.job_collections.get("rg-strange", "jc"))
    _refused(lambda: client.job_collections.get("rg-strange", "missing"))  # 403, not 404: existence is not told
    _refused(lambda: list(client.job_collections.list_by_subscription()))
    with pytest.raises(ResourceNotFoundError):
        scheduler.client(OWNER).jobs.get("rg-strange", "jc", "j")


def test_reader_reads_and_may_not_write_run_or_delete(scheduler: Scheduler) -> None:
    owner = scheduler.client(OWNER)
    owner.job_collections.create_or_update("rg-read", "jc", _collection())
    owner.jobs.create_or_update("rg-read", "jc", "j", _job())
    reader = new_id()
    scheduler.assign(reader, READER_ROLE, group_scope("rg-read"))
    client = scheduler.client(reader)
    assert client.job_collections.get("rg-read", "jc").name == "jc"
    assert [j.name for j in client.jobs.list("rg-read", "jc")] == ["jc/j"]
    assert list(client.jobs.list_job_history("rg-read", "jc", "j")) == []
    for call in (
        lambda: client.jobs.create_or_update("rg-read", "jc", "j2", _job()),
        lambda: client.jobs.run("rg-read", "jc", "j"),
        lambda: client.jobs.delete("rg-read", "jc", "j"),
        lambda: client.job_collections.patch("rg-read", "jc", m.JobCollectionDefinition(tags={"a": "b"})),
        lambda: client.job_collections.begin_disable("rg-read", "jc").result(),
    ):
        assert _refused(call).error.code == "AuthorizationFailed"
    assert owner.jobs.get("rg-read", "jc", "j").properties.state == "enabled"
    assert [j.name for j in owner.jobs.list("rg-read", "jc")] == ["jc/j"]


def test_contributor_writes_within_its_scope_only(scheduler: Scheduler) -> None:
    owner = scheduler.client(OWNER)
    owner.job_collections.create_or_update("rg-contrib", "mine", _collection())
    owner.job_collections.create_or_update("rg-contrib", "theirs", _collection())
    contributor = new_id()
    scheduler.assign(contributor, CONTRIBUTOR_ROLE, collection_scope("rg-contrib", "mine"))
    client = scheduler.client(contributor)
    client.jobs.create_or_update("rg-contrib", "mine", "j", _job())
    client.jobs.run("rg-contrib", "mine", "j")
    client.job_collections.patch("rg-contrib", "mine", m.JobCollectionDefinition(tags={"team": "a"}))
    _refused(lambda: client.jobs.create_or_update("rg-contrib", "theirs", "j", _job()))
    _refused(lambda: client.job_collections.create_or_update("rg-contrib", "new", _collection()))
    # A Contributor may not hand out access: role assignments need an Owner.
    scheduler.assign(new_id(), READER_ROLE, collection_scope("rg-contrib", "mine"), by=contributor, expect=403)
    client.jobs.delete("rg-contrib", "mine", "j")
    client.job_collections.begin_delete("rg-contrib", "mine").result()


def test_a_group_assignment_applies_to_its_members_only(scheduler: Scheduler) -> None:
    scheduler.client(OWNER).job_collections.create_or_update("rg-group", "jc", _collection())
    group, member = new_id(), new_id()
    scheduler.assign(group, CONTRIBUTOR_ROLE, group_scope("rg-group"))
    scheduler.client(member, groups=[group.upper()]).jobs.create_or_update("rg-group", "jc", "j", _job())
    many = [new_id() for _ in range(30)] + [group]  # more ids than one Table Storage filter may compare
    assert scheduler.client(new_id(), groups=many).jobs.get("rg-group", "jc", "j").name == "jc/j"
    _refused(lambda: scheduler.client(member, groups=[new_id()]).jobs.get("rg-group", "jc", "j"))


def test_lists_show_only_what_the_caller_may_read(scheduler: Scheduler) -> None:
    owner = scheduler.client(OWNER)
    for group, name in (("rg-list-a", "seen"), ("rg-list-a", "hidden"), ("rg-list-b", "other")):
        owner.job_collections.create_or_update(group, name, _collection())
    reader = new_id()
    scheduler.assign(reader, READER_ROLE, collection_scope("rg-list-a", "seen"))
    client = scheduler.client(reader)
    assert [c.name for c in client.job_collections.list_by_subscription()] == ["seen"]
    assert [c.name for c in client.job_collections.list_by_resource_group("rg-list-a")] == ["seen"]
    _refused(lambda: list(client.job_collections.list_by_resource_group("rg-list-b")))
    names = {c.name for c in owner.job_collections.list_by_subscription()}
    assert {"seen", "hidden", "other"} <= names


def test_an_owner_at_a_resource_group_delegates_below_it_only(scheduler: Scheduler) -> None:
    owner = scheduler.client(OWNER)
    owner.job_collections.create_or_update("rg-deleg", "jc", _collection())
    team_owner, teammate = new_id(), new_id()
    scheduler.assign(team_owner, OWNER_ROLE, group_scope("rg-deleg"))
    scheduler.assign(teammate, CONTRIBUTOR_ROLE, collection_scope("rg-deleg", "jc"), by=team_owner)
    scheduler.client(teammate).jobs.create_or_update("rg-deleg", "jc", "j", _job())
    scheduler.assign(teammate, OWNER_ROLE, f"/subscriptions/{SUB}", by=team_owner, expect=403)
    scheduler.assign(teammate, READER_ROLE, group_scope("rg-elsewhere"), by=team_owner, expect=403)


def test_an_expired_token_is_refused_through_the_client(scheduler: Scheduler) -> None:
    client = scheduler.client(OWNER, lifetime=-600)
    with pytest.raises(ClientAuthenticationError) as caught:
        client.job_collections.get("rg-boot", "jc")
    assert caught.value.status_code == 401
    assert caught.value.error.code == "ExpiredAuthenticationToken"
