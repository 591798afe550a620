"""In-process API calls with any resource group and collection, for the tests of several storage accounts."""

from __future__ import annotations

from typing import Any

from shared import api
from shared.runtime import Runtime
from tests.support.scheduler_client import api_call, encoded

SUB = "sub-accounts"
V = {"api-version": "2016-03-01"}


def call(
    rt: Runtime,
    operation: str,
    method: str,
    group: str | None = None,
    collection: str | None = None,
    job: str | None = None,
    body: Any = None,
    query: dict[str, str] | None = None,
) -> api.ApiResponse:
    return api_call(
        rt,
        operation,
        method,
        subscription=SUB,
        group=group,
        collection=collection,
        job=job,
        data=encoded(body),
        query={**V, **(query or {})},
    )


def make_collections(rt: Runtime, count: int) -> list[tuple[str, str]]:
    """(group, name) of `count` new Premium collections over two resource groups."""
    made = []
    for i in range(count):
        group, name = f"rg-{i % 2}", f"jc{i:02d}"
        answer = call(
            rt,
            "JobCollections_CreateOrUpdate",
            "PUT",
            group,
            name,
            body={"location": "West US", "properties": {"sku": {"name": "P20Premium"}}},
        )
        assert answer.status == 201, answer.body
        made.append((group, name))
    return made
