"""Private targets by list (SCHEDULER_PRIVATE_TARGETS): `loopback` allows loopback, `private` the RFC 1918 and
unique-local ranges, a CIDR its range, a host (or host:port) what that name resolves to. Link-local and cloud
metadata addresses (169.254.0.0/16, fe80::/10, 168.63.129.16, fd00:ec2::254, 100.100.100.200 ...) are allowed only
by an entry naming that exact address: never through `private`, a range or a host name. A refusal names the entry
that would allow the target. The policy is checked as a pure function of the resolved addresses, and through the
HTTP action, its async polls, its token endpoint and the executor, where the refusal comes before any connection
(no packet leaves loopback: the refused addresses are literals, resolved without a lookup)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from shared.actions import Accepted, ActionRunner, ExecutionContext
from shared.actions.http import HttpTarget
from shared.keys import JobKey
from shared.model import JobAction, JobErrorAction, JobExecutionStatus
from shared.private_targets import SETTING, PrivateTargets
from shared.runtime import Runtime
from shared.settings import Settings
from tests.executor.support import context
from tests.support.scheduler_client import JC, RG, SUB, call, drain, make_collection

LOOPBACK = PrivateTargets.parse("loopback")
PRIVATE = PrivateTargets.parse("loopback,private")
METADATA = ["169.254.169.254", "168.63.129.16", "fd00:ec2::254", "100.100.100.200", "fe80::1", "169.254.10.20"]


def allows(policy: PrivateTargets, host: str, *addresses: str, port: int = 80) -> bool:
    return policy.refusal(host, port, list(addresses)) is None


def test_nothing_internal_is_allowed_by_the_empty_list() -> None:
    for address in ("127.0.0.1", "::1", "10.0.0.1", "192.168.1.1", "fd12::1", *METADATA):
        assert not allows(PrivateTargets(), address, address), address
    assert allows(PrivateTargets(), "8.8.8.8", "8.8.8.8")


def test_loopback_allows_loopback_and_nothing_else() -> None:
    for address in ("127.0.0.1", "127.3.4.5", "::1", "::ffff:127.0.0.1"):
        assert allows(LOOPBACK, address, address), address
    for address in ("10.0.0.1", "172.16.0.1", "192.168.0.1", "fc00::1", "0.0.0.0", "::", *METADATA):
        assert not allows(LOOPBACK, address, address), address


def test_private_allows_rfc1918_and_unique_local_but_no_link_local_or_metadata() -> None:
    for address in ("10.0.0.1", "172.31.255.254", "192.168.1.1", "fd12:3456::1", "::ffff:10.1.2.3"):
        assert allows(PRIVATE, address, address), address
    for address in METADATA:
        assert not allows(PRIVATE, address, address), address
    assert not allows(PRIVATE, "100.64.0.1", "100.64.0.1")  # CGNAT is not RFC 1918


def test_the_metadata_address_is_refused_under_every_range_and_allowed_only_when_named() -> None:
    broad = PrivateTargets.parse("loopback, private, 0.0.0.0/0, 169.254.0.0/16, ::/0, fe80::/10, fd00::/8")
    for address in METADATA:
        assert not allows(broad, address, address), address
    named = PrivateTargets.parse("169.254.169.254")
    assert allows(named, "169.254.169.254", "169.254.169.254")
    assert not allows(named, "169.254.169.253", "169.254.169.253")
    assert allows(PrivateTargets.parse("fd00:ec2::254"), "fd00:ec2::254", "fd00:ec2::254")
    assert allows(PrivateTargets.parse("[fd00:ec2::254]:80"), "fd00:ec2::254", "fd00:ec2::254")
    assert not allows(PrivateTargets.parse("[fd00:ec2::254]:80"), "fd00:ec2::254", "fd00:ec2::254", port=8080)


def test_ipv6_forms_of_the_metadata_address_are_refused_and_allowed_by_naming_it() -> None:
    forms = ["::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "::169.254.169.254", "fe80::a9fe:a9fe"]
    for address in forms:
        assert not allows(PRIVATE, address, address), address
    named = PrivateTargets.parse("169.254.169.254")
    assert allows(named, "::ffff:169.254.169.254", "::ffff:169.254.169.254")
    assert allows(PrivateTargets.parse("::ffff:169.254.169.254"), "169.254.169.254", "169.254.169.254")


def test_a_host_name_resolving_to_a_metadata_address_is_refused_even_when_the_name_is_listed() -> None:
    policy = PrivateTargets.parse("loopback,private,metadata.internal,hooks.internal:8080")
    assert not allows(policy, "metadata.internal", "169.254.169.254")
    assert not allows(policy, "hooks.internal", "10.0.0.1", "169.254.169.254", port=8080)  # one bad address: all
    message = policy.refusal("metadata.internal", 80, ["169.254.169.254"])
    assert message is not None and "'169.254.169.254'" in message and "one by one" in message
    assert allows(PrivateTargets.parse("169.254.169.254"), "metadata.internal", "169.254.169.254")


def test_a_named_host_allows_its_internal_addresses_on_its_port() -> None:
    policy = PrivateTargets.parse("hooks.internal:8080, Build.Local.")
    assert allows(policy, "hooks.internal", "100.64.0.7", port=8080)
    assert not allows(policy, "hooks.internal", "100.64.0.7", port=8081)
    assert not allows(policy, "other.internal", "100.64.0.7", port=8080)
    assert allows(policy, "build.local", "10.9.8.7", "127.0.0.1", port=443)


def test_a_cidr_allows_its_range() -> None:
    policy = PrivateTargets.parse("100.64.0.0/10,fd00:1::/64")
    assert allows(policy, "100.70.1.2", "100.70.1.2") and allows(policy, "fd00:1::9", "fd00:1::9")
    assert not allows(policy, "10.0.0.1", "10.0.0.1")
    assert not allows(policy, "100.100.100.200", "100.100.100.200")  # Alibaba's metadata address, inside it


def test_the_refusal_names_the_entry_that_would_allow_the_target() -> None:
    def said(policy: PrivateTargets, host: str, address: str) -> str:
        message = policy.refusal(host, 80, [address])
        assert message is not None and SETTING in message and "resolves to an internal address" in message
        return message

    assert "'loopback'" in said(PrivateTargets(), "127.0.0.1", "127.0.0.1")
    assert "'private'" in said(LOOPBACK, "10.0.0.1", "10.0.0.1")
    assert "'private'" in said(LOOPBACK, "hooks.internal", "10.0.0.1")
    assert "'hooks.internal'" in said(LOOPBACK, "hooks.internal", "10.0.0.1")
    assert "'100.64.0.1'" in said(PRIVATE, "100.64.0.1", "100.64.0.1")
    metadata = said(PRIVATE, "169.254.169.254", "169.254.169.254")
    assert "'169.254.169.254'" in metadata and "one by one" in metadata
    assert "'private'" not in metadata.split("never")[0]  # named as what does not allow it, if at all
    assert "'168.63.129.16'" in said(PRIVATE, "168.63.129.16", "168.63.129.16")


def test_entries_that_are_not_understood_are_refused() -> None:
    for text in (
        "10.0.0.300",
        "10.0.0.0/33",
        "10.0.0.1/8",
        "host:0",
        "host:99999",
        "*",
        "fe80::1%eth0",
        "bad host",
        "[hooks.internal]:80",
    ):
        with pytest.raises(ValueError, match=SETTING):
            PrivateTargets.parse(text)


def _action(url: str) -> JobErrorAction:
    return JobErrorAction.model_validate({"type": "Http", "request": {"uri": url, "method": "GET"}})


def test_the_http_action_to_the_metadata_address_is_refused_before_connecting(settings: Settings) -> None:
    target = HttpTarget(replace(settings, private_targets=PRIVATE))
    result = target.run(_action("http://169.254.169.254/metadata/instance?api-version=2021-02-01"), context())
    assert not result.succeeded
    assert result.message.startswith("Http Action - Request to host '169.254.169.254' was refused: ")
    assert "'169.254.169.254'" in result.message and "one by one" in result.message


def test_the_token_endpoint_at_the_metadata_address_is_refused(settings: Settings) -> None:
    target = HttpTarget(replace(settings, private_targets=LOOPBACK, aad_authority_host="http://169.254.169.254"))
    auth = {"type": "ActiveDirectoryOAuth", "tenant": "t.example", "clientId": "c", "secret": "s", "audience": "a"}
    result = target.run(
        JobErrorAction.model_validate(
            {
                "type": "Http",
                "request": {"uri": "https://hooks.example.invalid/", "method": "GET", "authentication": auth},
            }
        ),
        context(),
    )
    assert not result.succeeded and "token endpoint was refused" in result.message
    assert "'169.254.169.254'" in result.message and "one by one" in result.message


def test_a_poll_location_at_the_metadata_address_is_refused(settings: Settings) -> None:
    runner = ActionRunner.from_settings(replace(settings, private_targets=PRIVATE))
    action = JobAction.model_validate(
        {
            "type": "Https",
            "request": {"uri": "https://api.example.invalid/work", "method": "POST", "asyncCompletion": {}},
        }
    )
    key = JobKey(SUB, RG, JC, "j")
    ctx = ExecutionContext(key, str(uuid.uuid4()), datetime.now(UTC), 0, "West US", str(uuid.uuid4()))
    polled = runner.run_poll(action, ctx, Accepted("http://[::ffff:169.254.169.254]/latest/meta-data/", False))
    assert not polled.succeeded and polled.again is None
    assert "Polling the operation at host '::ffff:169.254.169.254' was refused" in polled.message
    assert "'169.254.169.254'" in polled.message and "one by one" in polled.message


def test_a_job_calling_the_metadata_address_records_the_refusal_with_the_entry_to_name(runtime: Runtime) -> None:
    """Through the executor with the test deployment's own list (loopback only): one Failed attempt in history."""
    make_collection(runtime)
    key = JobKey(SUB, RG, JC, "meta")
    # A second ahead of the API's now: a recurring job's first occurrence is the first at or after the write, so a
    # startTime of "now" that the PUT reaches in the next second (a busy machine) would first fire tomorrow.
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    body = {
        "properties": {
            "startTime": start.isoformat(),
            "action": {
                "type": "Http",
                "request": {"uri": "http://169.254.169.254/latest/meta-data/", "method": "GET"},
                "retryPolicy": {"retryType": "None"},
            },
            "recurrence": {"frequency": "Day", "interval": 1},
        }
    }
    assert call(runtime, "Jobs_CreateOrUpdate", "PUT", "meta", body).status == 201
    drain(runtime, 30, until=lambda: bool(runtime.store.history.page(key, None, 10)[0]))
    history, _ = runtime.store.history.page(key, None, 10)
    assert [h.status for h in history] == [JobExecutionStatus.FAILED]
    assert history[0].message == (
        "Http Action - Request to host '169.254.169.254' was refused: '169.254.169.254' resolves to an internal "
        f"address (link-local or cloud metadata), which {SETTING} allows only when it names it one by one: "
        "the entry '169.254.169.254' (never a range, 'private' or a host name)"
    )
