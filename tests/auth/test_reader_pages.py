"""A Reader's walk through a subscription's pages (entra mode, tokens from the local issuer, the real function_app.py
under the local host) never shows a name it may not read: not in a page, not in a nextLink, not in where a page
ends. Pages hold only readable collections (full pages, `$skip` counting readable ones), and the sealed
$skiptoken continues the Reader's own list only: another caller's, another list's, or one from before the
Reader's access changed is a 400."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests

from shared.api import continuation
from shared.keys import CollectionKey
from shared.model import JobCollectionDefinition
from shared.records import CollectionRecord
from shared.runtime import Runtime
from shared.settings import Settings
from shared.store.keys import collection_row
from tests.auth.conftest import API, OWNER, READER_ROLE, SUB, Scheduler, collection_scope, group_scope
from tests.support.identity import new_id

LIST = f"/subscriptions/{SUB}/providers/Microsoft.Scheduler/jobCollections"
# Row-key order: hr|..., payroll|..., secretgroup|..., team|..., zeta|...
GROUPS = {"hr": ("h", 20), "payroll": ("p", 150), "secretgroup": ("s", 40), "team": ("t", 120), "zeta": ("z", 30)}
GRANTED = [("payroll", "p010"), ("payroll", "p075"), ("payroll", "p149")]  # plus all of "team"


def _all() -> list[tuple[str, str]]:
    return [(group, f"{prefix}{i:03d}") for group, (prefix, count) in GROUPS.items() for i in range(count)]


READABLE = [key for key in _all() if key in GRANTED or key[0] == "team"]
HIDDEN = [key for key in _all() if key not in READABLE]


@pytest.fixture(scope="module")
def reader(scheduler: Scheduler) -> Iterator[str]:
    rt = Runtime.create(Settings.from_environment())  # the hosted app's own tables
    definition = JobCollectionDefinition.model_validate(
        {"location": "westus", "properties": {"sku": {"name": "Standard"}}}
    )
    with ThreadPoolExecutor(8) as pool:  # written to the store directly: the API's write path is tested elsewhere
        list(
            pool.map(
                lambda key: rt.store.collections.insert(CollectionRecord(CollectionKey(SUB, *key), definition)), _all()
            )
        )
    oid = new_id()
    scheduler.assign(oid, READER_ROLE, group_scope("team"))
    for group, name in GRANTED:
        scheduler.assign(oid, READER_ROLE, collection_scope(group, name))
    yield oid
    rt.close()


def _get(scheduler: Scheduler, oid: str, url: str, params: dict[str, str] | None = None) -> requests.Response:
    return requests.get(
        url, params=params, timeout=30, headers={"Authorization": f"Bearer {scheduler.issuer.token(oid)}"}
    )


def walk(scheduler: Scheduler, oid: str, params: dict[str, str] | None = None) -> list[tuple[list[str], str | None]]:
    """Every page of the subscription's list as `oid` sees it: (names, nextLink) per page."""
    pages: list[tuple[list[str], str | None]] = []
    answer = _get(scheduler, oid, f"{scheduler.url}{LIST}", API if params is None else params)
    while True:
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        pages.append(([c["name"] for c in body["value"]], body["nextLink"]))
        if body["nextLink"] is None:
            return pages
        answer = _get(scheduler, oid, body["nextLink"])


def _token(link: str) -> str:
    return dict(parse_qsl(urlsplit(link).query))["$skiptoken"]


def test_a_readers_walk_shows_only_what_it_may_read(scheduler: Scheduler, reader: str) -> None:
    pages = walk(scheduler, reader)
    names = [name for page, _ in pages for name in page]
    assert names == [name for _, name in READABLE]  # all of them, once each, in order
    assert [len(page) for page, _ in pages] == [100, 23]  # full pages: nothing tells of the hidden rows
    for _, link in pages[:-1]:
        assert link is not None
        token = _token(link)
        assert link == f"{scheduler.url}{LIST}?api-version=2016-03-01&$skiptoken={token}"
        raw = base64.urlsafe_b64decode(token + "==")
        for text in (token, raw.decode("latin-1")):  # no row key, no name in any encoding we could undo
            assert "payroll" not in text and "secretgroup" not in text and "after" not in text
            assert not any(collection_row(CollectionKey(SUB, *key)) in text for key in HIDDEN + READABLE)
    # Where a page ends is the last collection the Reader was shown (sealed, so only the service can tell).
    settings = Settings.from_environment()
    scopes = [group_scope("team"), *(collection_scope(g, n) for g, n in GRANTED)]
    bound = continuation.binding("jobCollections", {"subscriptionId": SUB}, "", reader, scopes)
    position = continuation.unseal(settings, datetime.now(UTC), bound, _token(str(pages[0][1])))
    assert position == collection_row(CollectionKey(SUB, *READABLE[99]))
    # $skip counts what the Reader may read, too.
    skipped = _get(scheduler, reader, f"{scheduler.url}{LIST}", {**API, "$skip": "2", "$top": "3"}).json()
    assert [c["name"] for c in skipped["value"]] == ["p149", "t000", "t001"] and skipped["nextLink"] is None
    rest = walk(scheduler, reader, {**API, "$skip": "100"})
    assert [names for names, _ in rest] == [[name for _, name in READABLE[100:]]]


def test_a_token_continues_only_its_callers_list(scheduler: Scheduler, reader: str) -> None:
    readers_link = str(walk(scheduler, reader)[0][1])
    owners_link = str(walk(scheduler, OWNER)[0][1])
    assert [len(page) for page, _ in walk(scheduler, OWNER)] == [100, 100, 100, 60]
    for oid, link in ((reader, owners_link), (OWNER, readers_link), (new_id(), readers_link)):
        answer = _get(scheduler, oid, link)
        if oid not in (reader, OWNER):
            assert answer.status_code == 403  # a stranger may list nothing at all
            continue
        assert answer.status_code == 400 and answer.json()["error"]["message"].startswith("$skiptoken: ")
    twin = new_id()  # the same grants, another caller
    scheduler.assign(twin, READER_ROLE, group_scope("team"))
    for group, name in GRANTED:
        scheduler.assign(twin, READER_ROLE, collection_scope(group, name))
    assert _get(scheduler, twin, readers_link).status_code == 400
    by_group = f"{scheduler.url}/subscriptions/{SUB}/resourceGroups/team/providers/Microsoft.Scheduler/jobCollections"
    assert _get(scheduler, reader, by_group, {**API, "$skiptoken": _token(readers_link)}).status_code == 400
    raw = bytearray(base64.urlsafe_b64decode(_token(readers_link) + "=="))
    raw[20] ^= 0x80
    flipped = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    answer = _get(scheduler, reader, f"{scheduler.url}{LIST}", {**API, "$skiptoken": flipped})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "BadRequest"
    assert _get(scheduler, reader, readers_link).status_code == 200
    scheduler.assign(reader, READER_ROLE, collection_scope("zeta", "z000"))  # the Reader's access changes
    answer = _get(scheduler, reader, readers_link)
    assert answer.status_code == 400 and "access changed" in answer.json()["error"]["message"]
