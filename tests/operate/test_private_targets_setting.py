"""SCHEDULER_PRIVATE_TARGETS is read once at start: a list of entries, any entry not understood refused with the
setting's name. The local default (local.settings.sample.json, which `make run` and devhost start from) allows
loopback only. The older SCHEDULER_ALLOW_PRIVATE_TARGETS still works where the list is not set: `true` means
`loopback,private`, never a link-local or metadata address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.private_targets import LEGACY_SETTING, SETTING, PrivateTargets
from shared.settings import ConfigurationError, Settings

ROOT = Path(__file__).resolve().parents[2]
STORAGE = {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}


def _read(**values: str) -> PrivateTargets:
    return Settings.from_environment({**STORAGE, **values}).private_targets


def test_unset_allows_no_private_target() -> None:
    assert _read() == PrivateTargets()
    assert _read().refusal("127.0.0.1", 80, ["127.0.0.1"]) is not None


def test_the_list_is_read_from_the_setting() -> None:
    policy = _read(**{SETTING: " loopback , 10.1.0.0/16,hooks.internal:8443 "})
    assert policy == PrivateTargets.parse("loopback,10.1.0.0/16,hooks.internal:8443")
    assert policy.refusal("10.1.2.3", 80, ["10.1.2.3"]) is None
    assert policy.refusal("10.2.0.1", 80, ["10.2.0.1"]) is not None


def test_an_entry_not_understood_stops_the_app_with_the_setting_named() -> None:
    with pytest.raises(ConfigurationError, match=f"{SETTING}.*'10.0.0.300'"):
        _read(**{SETTING: "loopback,10.0.0.300"})


def test_the_local_sample_allows_loopback_only() -> None:
    values = json.loads((ROOT / "local.settings.sample.json").read_text())["Values"]
    policy = Settings.from_environment(values).private_targets
    assert policy == PrivateTargets.parse("loopback")
    assert policy.refusal("127.0.0.1", 7071, ["127.0.0.1"]) is None
    for address in ("10.0.0.1", "169.254.169.254", "168.63.129.16"):
        assert policy.refusal(address, 80, [address]) is not None


def test_the_older_switch_means_loopback_and_private_never_metadata() -> None:
    policy = _read(**{LEGACY_SETTING: "true"})
    assert policy == PrivateTargets.parse("loopback,private")
    assert policy.refusal("10.0.0.1", 80, ["10.0.0.1"]) is None
    for address in ("169.254.169.254", "fe80::1", "168.63.129.16", "fd00:ec2::254"):
        assert policy.refusal(address, 80, [address]) is not None
    assert _read(**{LEGACY_SETTING: "false"}) == PrivateTargets()


def test_the_list_and_the_older_switch_together_or_a_switch_not_understood_are_refused() -> None:
    """A local.settings.json copied from an older sample keeps the switch; set beside the list, one of the two
    would go unapplied, so the app refuses to start and says which to remove."""
    for legacy in ("true", "false"):
        with pytest.raises(ConfigurationError, match=f"remove {LEGACY_SETTING}"):
            _read(**{LEGACY_SETTING: legacy, SETTING: "loopback"})
    with pytest.raises(ConfigurationError, match=LEGACY_SETTING):
        _read(**{LEGACY_SETTING: "maybe"})
