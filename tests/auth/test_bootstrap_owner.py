"""The bootstrap Owner (SCHEDULER_AUTH_OWNER) holds Owner over every scope, as a user, service principal or group."""

from __future__ import annotations

import dataclasses

from shared.auth.gate import grants_of
from shared.auth.principal import Principal
from shared.auth.roles import OWNER
from shared.runtime import Runtime
from shared.settings import Settings
from tests.support.identity import LocalIssuer, new_id


def test_the_bootstrap_owner_may_be_a_user_or_a_group(settings: Settings) -> None:
    user, group = new_id(), new_id()
    auth = LocalIssuer(url="http://127.0.0.1:9").settings(user, group.upper())
    rt = Runtime.create(dataclasses.replace(settings, auth=auth))
    for principal in (Principal(user, "u"), Principal(new_id(), "member", (group,))):
        assert [(g.scope, g.role) for g in grants_of(rt, principal, "any-subscription")] == [("/", OWNER)]
    assert grants_of(rt, Principal(new_id(), "stranger", (new_id(),)), "any-subscription") == []
